// A dependency whose type is not `Sendable`: Swift 6 mode must reject its key, which is what `run.sh` checks, because
// every thread that reads the key would share one unprotected instance. Swift 5 mode accepts it, as it accepts the
// article's code.

final class Cart {
    var items: [String] = []
}

private enum CartKey: ReadOnlyInjectionKey {
    static var currentValue: Cart { Cart() }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    var cart: Cart {
        get { Self[CartKey.self] }
        set { Self[CartKey.self] = newValue }
    }
}

InjectedValues[\.cart].items.append("apple")
print("non-sendable client: compiled")
