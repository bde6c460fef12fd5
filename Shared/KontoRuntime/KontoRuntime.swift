public enum KontoRuntimePlaceholder {}
