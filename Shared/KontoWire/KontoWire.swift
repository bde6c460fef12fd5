public enum KontoWirePlaceholder {}
