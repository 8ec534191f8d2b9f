// The shapes the main-actor recipe names, in a module whose default isolation is the main actor: a service read off
// the main actor through its key and accessor, by a plain function, a kept key path and an actor's `@Injected`.
// `messages.sh` compiles it as it is, which must succeed, and then with one `nonisolated` removed at a time, checking
// that Swift says what the documentation quotes.

import Injected

nonisolated protocol WeatherService: Sendable {
    func temperature(in city: String) async throws -> Int
    func unit() -> String
}

struct LiveWeather: WeatherService {
    func temperature(in city: String) async throws -> Int { 21 }
    func unit() -> String { "°C" }
}

nonisolated struct Forecast: Sendable {
    func summary() -> String { "mild" }
}

/// A protocol left on the main actor whose requirements are all `async`.
///
/// Swift says nothing, and every call hops to the main actor. Kept here so that a compiler that starts to say
/// something is noticed.
protocol SilentService: Sendable {
    func fetch() async -> Int
}

nonisolated func fetchOffTheMainActor(from service: any SilentService) async -> Int {
    await service.fetch()
}

nonisolated enum WeatherKey: ReadOnlyInjectionKey {
    static var currentValue: any WeatherService { LiveWeather() }
}

extension InjectedValues {
    nonisolated var weather: any WeatherService {
        get { Self[WeatherKey.self] }
        set { Self[WeatherKey.self] = newValue }
    }
}

nonisolated func unitOffTheMainActor() -> String {
    InjectedValues[\.weather].unit() + Forecast().summary()
}

nonisolated func weatherKeyPath() -> any Sendable {
    \InjectedValues.weather
}

actor Refresher {
    @Injected(\.weather) var weather
}
