/// The console's stylesheet and script, served by the gateway (no build step, no CDN, no external font).
enum ConsoleAssets {
    /// The pages name it, so browsers do not ask for `/favicon.ico` (a 404 the API would answer).
    static let icon = """
    <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#2f6fde"/>\
    <path d="M10 7h4v8l7-8h5l-8 9 8 9h-5l-7-8v8h-4z" fill="#fff"/></svg>
    """

    static let stylesheet = """
    :root { color-scheme: light dark; --accent: #2f6fde; --danger: #c0392b; --muted: #6b7280; --line: #d0d5dd; }
    * { box-sizing: border-box; }
    body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
    header.top { padding: 0.75rem 1rem; border-bottom: 1px solid var(--line); }
    .brand { font-weight: 700; text-decoration: none; color: inherit; }
    main { max-width: 40rem; margin: 0 auto; padding: 1rem; }
    h1 { font-size: 1.6rem; margin: 0.5rem 0 1rem; }
    h2 { font-size: 1.2rem; margin: 1.5rem 0 0.5rem; }
    fieldset { border: 1px solid var(--line); border-radius: 0.5rem; margin: 0 0 1rem; padding: 0.75rem 1rem; min-width: 0; }
    legend { font-weight: 600; padding: 0 0.25rem; }
    .field { margin: 0 0 0.9rem; }
    .field label, .field legend { display: block; margin-bottom: 0.25rem; }
    .field.checkbox { display: flex; gap: 0.5rem; align-items: flex-start; flex-wrap: wrap; }
    .field.checkbox label { display: inline; margin: 0; }
    .field.checkbox .field-error { flex-basis: 100%; }
    fieldset.field { border-style: dashed; }
    .item { margin-bottom: 0.5rem; }
    input[type=text], input[type=email], input[type=password], input[type=number], input[type=date], select {
        width: 100%; font: inherit; padding: 0.55rem 0.6rem; border: 1px solid var(--line); border-radius: 0.4rem; }
    input[type=checkbox] { width: 1.25rem; height: 1.25rem; margin-top: 0.15rem; }
    input:focus-visible, select:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
    [aria-invalid=true] { border-color: var(--danger); }
    .field-error { color: var(--danger); margin: 0.25rem 0 0; font-size: 0.95rem; }
    .form-error { border: 1px solid var(--danger); color: var(--danger); border-radius: 0.4rem; padding: 0.6rem 0.8rem; margin: 0 0 1rem; }
    .notice { border: 1px solid var(--accent); border-radius: 0.4rem; padding: 0.6rem 0.8rem; margin: 0 0 1rem; }
    .required, .hint { color: var(--muted); font-size: 0.9rem; }
    button, a.button { display: inline-block; font: inherit; padding: 0.55rem 1rem; border-radius: 0.4rem; border: 1px solid var(--accent);
        background: var(--accent); color: #fff; text-decoration: none; cursor: pointer; margin: 0.25rem 0.5rem 0.25rem 0; }
    button.secondary, a.button.secondary { background: transparent; color: var(--accent); }
    button.danger { background: var(--danger); border-color: var(--danger); }
    a.danger { color: var(--danger); }
    dl { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: 0.35rem 1rem; margin: 0; }
    dt { color: var(--muted); }
    dd { margin: 0; overflow-wrap: anywhere; }
    section.category { border-top: 1px solid var(--line); }
    .actions { margin: 1.5rem 0 0.5rem; }
    form { margin: 0 0 0.5rem; }
    form.inline { display: inline-block; }
    @media (max-width: 30rem) { dl { grid-template-columns: 1fr; } dt { margin-top: 0.5rem; } }
    """

    /// Checks inputs against the rules `GET /v1/schema` publishes (the server's own patterns and messages) before a
    /// form is sent, and grows list fields. Without it every page still works: the server checks the same rules.
    static let script = """
    const base = document.body.dataset.base || "";
    const required = "This field is required.";
    let rulesByKey = new Map();

    // A server pattern as a JavaScript one: a whole-string match; a leading (?s) becomes the s flag. A pattern
    // JavaScript cannot compile is left to the server.
    function compile(rule) {
      let source = rule.pattern;
      let flags = "u";
      if (source.startsWith("(?s)")) { source = source.slice(4); flags += "s"; }
      try { return new RegExp("^(?:" + source + ")$", flags); } catch { return null; }
    }

    async function loadRules() {
      try {
        const response = await fetch("/v1/schema", { headers: { accept: "application/json" }, credentials: "omit" });
        if (!response.ok) { return; }
        const schema = await response.json();
        for (const key of schema.keys || []) {
          rulesByKey.set(key.identifier, (key.rules || []).map((rule) => ({ regex: compile(rule), message: rule.message, maxLength: rule.maxLength })));
        }
      } catch {
        rulesByKey = new Map();
      }
    }

    function fieldOf(input) {
      return input.closest(".field");
    }

    function errorIdOf(input) {
      const field = fieldOf(input);
      const list = field && field.dataset.list;
      if (list) { return "error-" + list; }
      if (input.name.includes("[")) { return "error-" + input.name.slice(0, input.name.indexOf("[")); }
      return "error-" + input.name;
    }

    // `changed`: the user edited the input, so even the server's message about its old value goes.
    function showError(input, message, changed = false) {
      const id = errorIdOf(input);
      let paragraph = document.getElementById(id);
      if (message) {
        if (!paragraph) {
          paragraph = document.createElement("p");
          paragraph.className = "field-error";
          paragraph.id = id;
          const field = fieldOf(input);
          const add = field && field.querySelector("button.add");
          if (add) { field.insertBefore(paragraph, add.nextSibling); }
          else if (field) { field.appendChild(paragraph); }
          else { input.insertAdjacentElement("afterend", paragraph); }
        }
        paragraph.textContent = message;
        input.setAttribute("aria-invalid", "true");
        input.setAttribute("aria-describedby", id);
      } else {
        input.removeAttribute("aria-invalid");
        if (paragraph && (changed || paragraph.dataset.client === "true")) { paragraph.remove(); }
      }
      if (paragraph && message) { paragraph.dataset.client = "true"; }
    }

    function problemOf(input) {
      const value = input.value;
      if (input.type === "checkbox") {
        return input.getAttribute("aria-required") === "true" && !input.checked ? required : null;
      }
      if (value === "") {
        return input.getAttribute("aria-required") === "true" ? required : null;
      }
      if (input.type === "number" && Number.isNaN(Number(value))) { return "Enter a number."; }
      const rules = rulesByKey.get(input.dataset.key) || [];
      const length = new TextEncoder().encode(value).length;
      for (const rule of rules) {
        if ((rule.maxLength && length > rule.maxLength) || (rule.regex && !rule.regex.test(value))) { return rule.message; }
      }
      return null;
    }

    function validate(form) {
      let first = null;
      for (const input of form.querySelectorAll("input:not([type=hidden]), select")) {
        const problem = problemOf(input);
        showError(input, problem);
        if (problem && !first) { first = input; }
      }
      // A required name is one fieldset of optional parts: it is missing when every part is empty (said beside it).
      for (const name of form.querySelectorAll("fieldset.name[data-required=true]")) {
        const parts = Array.from(name.querySelectorAll("input"));
        if (parts.length > 0 && parts.every((input) => input.value.trim() === "")) {
          showError(parts[0], required);
          if (!first) { first = parts[0]; }
        }
      }
      if (first) { first.focus(); }
      return first === null;
    }

    function growList(button) {
      const key = button.dataset.add;
      const list = document.getElementById("list-" + key);
      const items = list.querySelectorAll(".item");
      const index = items.length;
      const template = items[items.length - 1];
      const item = template.cloneNode(true);
      const input = item.querySelector("input");
      const label = item.querySelector("label");
      input.id = "field-" + key + "-" + index;
      input.value = "";
      input.removeAttribute("aria-invalid");
      label.htmlFor = input.id;
      label.textContent = (list.dataset.label || key) + " " + (index + 1);
      list.insertBefore(item, button);
      input.focus();
    }

    for (const button of document.querySelectorAll("button.add")) {
      button.hidden = false;
      button.addEventListener("click", () => growList(button));
    }

    // Passkeys: the form's options go to the browser's WebAuthn API, and its answer back in the form as WebAuthn's
    // JSON form (what `credential.toJSON()` gives; written out here for browsers without it). Binary members are
    // base64url without padding.
    function bytesOf(text) {
      const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/") + "===".slice((text.length + 3) % 4));
      return Uint8Array.from(binary, (character) => character.charCodeAt(0));
    }

    function textOf(buffer) {
      let binary = "";
      for (const byte of new Uint8Array(buffer)) { binary += String.fromCharCode(byte); }
      return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
    }

    function descriptors(list) {
      return (list || []).map((descriptor) => ({ ...descriptor, id: bytesOf(descriptor.id) }));
    }

    async function passkey(form) {
      const options = JSON.parse(form.dataset.options);
      const error = document.getElementById(form.id + "-error");
      error.hidden = true;
      let answer;
      try {
        if (form.dataset.passkey === "create") {
          const credential = await navigator.credentials.create({ publicKey: {
            ...options, challenge: bytesOf(options.challenge), user: { ...options.user, id: bytesOf(options.user.id) },
            excludeCredentials: descriptors(options.excludeCredentials),
          } });
          const response = credential.response;
          answer = { id: credential.id, rawId: textOf(credential.rawId), type: credential.type, response: {
            clientDataJSON: textOf(response.clientDataJSON), attestationObject: textOf(response.attestationObject),
            transports: response.getTransports ? response.getTransports() : [],
          } };
        } else {
          const credential = await navigator.credentials.get({ publicKey: {
            ...options, challenge: bytesOf(options.challenge), allowCredentials: descriptors(options.allowCredentials),
          } });
          const response = credential.response;
          answer = { id: credential.id, rawId: textOf(credential.rawId), type: credential.type, response: {
            clientDataJSON: textOf(response.clientDataJSON), authenticatorData: textOf(response.authenticatorData),
            signature: textOf(response.signature), userHandle: response.userHandle ? textOf(response.userHandle) : null,
          } };
        }
      } catch (failure) {
        // Cancelled, timed out, or no passkey for this site: say so, and leave the page as it is.
        error.textContent = failure && failure.name === "NotAllowedError"
          ? "No passkey was used (cancelled, or none for this site)." : "The passkey could not be used here.";
        error.hidden = false;
        return;
      }
      form.querySelector("input[name=credential]").value = JSON.stringify(answer);
      form.submit();
    }

    if (window.PublicKeyCredential && navigator.credentials) {
      for (const form of document.querySelectorAll("form[data-passkey]")) {
        form.hidden = false;
        form.querySelector("button").addEventListener("click", () => passkey(form));
      }
    }

    const forms = document.querySelectorAll("form[data-validate]");
    if (forms.length > 0) {
      await loadRules();
      for (const form of forms) {
        form.addEventListener("submit", (event) => { if (!validate(form)) { event.preventDefault(); } });
        // Once an input was refused, its message follows each change, so it goes when the value is right. New
        // messages wait for the submit: one appearing when a field is left would move what the user is clicking.
        form.addEventListener("change", (event) => {
          const input = event.target;
          if (input.matches("input:not([type=hidden]), select") && input.getAttribute("aria-invalid") === "true") {
            showError(input, problemOf(input), true);
          }
        });
      }
    }
    """
}
