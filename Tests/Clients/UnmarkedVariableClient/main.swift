// An article-style key whose stored `currentValue` does not say `nonisolated(unsafe)`: Swift 6 mode must reject it,
// which is what `run.sh` checks, because code that assigns the variable directly from two threads races. Swift 5 mode
// accepts it, as it accepts the article's code.

struct Config: Sendable {
    var baseURL = "https://api.example.com"
}

private enum ConfigKey: InjectionKey {
    static var currentValue = Config()
}

extension InjectedValues {
    var config: Config {
        get { Self[ConfigKey.self] }
        set { Self[ConfigKey.self] = newValue }
    }
}

ConfigKey.currentValue.baseURL = "https://staging.example.com"
print("unmarked variable client: \(InjectedValues[\.config].baseURL)")
