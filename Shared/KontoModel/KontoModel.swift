public enum KontoModelPlaceholder {}
