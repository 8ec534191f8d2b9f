#if canImport(WeatherCore)
import WeatherCore
#endif
#if canImport(Injected)
import Injected
#endif

/// Stops with a message if a check fails.
func check(_ condition: Bool, _ what: String) {
    if !condition { fatalError("main-actor client: \(what) failed") }
}

let live = WeatherViewModel()
await live.load(city: "Oslo")
check(live.text == "Oslo: 21°, in blue", "the live dependencies: \(live.text)")

let mocked = withInjectedValues {
    $0.weather = FixedWeather(degrees: -3)
} operation: {
    WeatherViewModel()
}
await mocked.load(city: "Oslo")
check(mocked.text == "Oslo: -3°, in blue", "a view model made in a scope keeps it: \(mocked.text)")

let offMain = await withInjectedValues {
    $0.weather = FixedWeather(degrees: 30)
} operation: {
    await temperatureOffTheMainActor(in: "Lisbon")
}
check(offMain == 21, "a detached task reads the global store, not the scope")
check(await temperatureOffTheMainActor(in: "Lisbon") == 21, "a read off the main actor")

InjectedValues[\.theme].accent = "green"
let themed = WeatherViewModel()
await themed.load(city: "Rome")
check(themed.text == "Rome: 21°, in green", "a main-actor dependency: \(themed.text)")
InjectedValues[\.units] = "fahrenheit"
check(await unitsOffTheMainActor() == "fahrenheit", "an article-style key written on the main actor, read off it")
print("main-actor client: ok")
