import Testing

@testable import WeatherCore

// With the package, this file imports Injected's two modules; with `Injected.swift` and `InjectedTesting.swift` copied
// into the app and this test target, there are none to import.
#if canImport(Injected)
import Injected
import InjectedTesting
#endif

@Suite(.injecting(\.weather, FixedWeather(degrees: 12)))
struct WeatherViewModelTests {
    @Test("the view model shows the mocked temperature")
    func showsTheMockedTemperature() async {
        let model = WeatherViewModel()
        await model.load(city: "Bergen")
        #expect(model.text == "Bergen: 12°, in blue")
    }

    @Test("a view model made with its own override keeps it in the test body")
    func keepsItsOwnOverride() async {
        let model = withInjectedValues {
            $0.weather = FixedWeather(degrees: 5)
        } operation: {
            WeatherViewModel()
        }
        await model.load(city: "Tromsø")
        #expect(model.text == "Tromsø: 5°, in blue")
    }
}
