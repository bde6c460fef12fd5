public enum KontoTestingPlaceholder {}
