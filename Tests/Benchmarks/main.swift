print("konto-bench")
