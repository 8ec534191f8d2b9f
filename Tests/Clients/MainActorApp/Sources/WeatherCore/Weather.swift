// With the package, this file imports the `Injected` module; with `Injected.swift` copied into the app, there is no
// module to import.
#if canImport(Injected)
import Injected
#endif

// MARK: - A dependency read on any thread

/// A service that any thread may call: `Sendable`, and `nonisolated` so that the module's default does not make it
/// main-actor code.
public protocol WeatherService: Sendable {
    nonisolated func temperature(in city: String) async -> Int
}

nonisolated struct LiveWeather: WeatherService {
    func temperature(in city: String) async -> Int { 21 }
}

/// A stand-in that always reports the same temperature, for tests and previews.
public nonisolated struct FixedWeather: WeatherService {
    let degrees: Int

    /// A stand-in that reports `degrees` everywhere.
    public init(degrees: Int) {
        self.degrees = degrees
    }

    /// The fixed temperature.
    public func temperature(in city: String) async -> Int { degrees }
}

/// The key and the accessor are `nonisolated`, so the dependency can be read off the main actor too.
nonisolated enum WeatherServiceKey: ReadOnlyInjectionKey {
    static var currentValue: any WeatherService { LiveWeather() }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    /// The weather service, readable on any thread.
    public nonisolated var weather: any WeatherService {
        get { Self[WeatherServiceKey.self] }
        set { Self[WeatherServiceKey.self] = newValue }
    }
}

// MARK: - An article-style key

/// The article's key form, a stored variable, in such a module: the key is `nonisolated` and its variable
/// `nonisolated(unsafe)`, as in any Swift 6 module.
nonisolated enum UnitsKey: InjectionKey {
    nonisolated(unsafe) static var currentValue = "celsius"
}

extension InjectedValues {
    /// The units temperatures are shown in, readable on any thread.
    public nonisolated var units: String {
        get { Self[UnitsKey.self] }
        set { Self[UnitsKey.self] = newValue }
    }
}

/// Reads the article-style dependency from a detached task, off the main actor.
public func unitsOffTheMainActor() async -> String {
    await Task.detached { InjectedValues[\.units] }.value
}

// MARK: - A dependency of the main actor

/// Interface state, isolated to the main actor by the module's default, like the rest of the app.
public final class Theme {
    /// The accent color's name.
    public var accent = "blue"

    /// The default theme.
    public init() {}
}

/// Left with the module's default isolation, so its conformance says so: its default is built on the main actor, and
/// the dependency can be read only there.
enum ThemeKey: @MainActor ReadOnlyInjectionKey {
    static var currentValue: Theme { Theme() }
    static var lifetime: InjectionLifetime { .cached }
}

extension InjectedValues {
    /// The theme, readable on the main actor only.
    public var theme: Theme {
        get { Self[ThemeKey.self] }
        set { Self[ThemeKey.self] = newValue }
    }
}

// MARK: - A view model

/// A view model, isolated to the main actor by the module's default.
public final class WeatherViewModel {
    @Injected(\.weather) var weather
    @Injected(\.theme) var theme
    /// What the screen shows.
    public private(set) var text = ""

    /// A view model that resolves its dependencies where it is made.
    public init() {}

    /// Loads the weather of `city` into ``text``.
    public func load(city: String) async {
        let degrees = await weather.temperature(in: city)
        text = "\(city): \(degrees)°, in \(theme.accent)"
    }
}

/// Reads the dependency from a detached task, off the main actor, through the store.
public func temperatureOffTheMainActor(in city: String) async -> Int {
    await Task.detached { await InjectedValues[\.weather].temperature(in: city) }.value
}
