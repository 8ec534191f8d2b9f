// A placeholder until the demo issue lands: it shows one dependency read through @Injected and overridden in a scope.
import Injected

protocol Greeting {
    func greet(_ name: String) -> String
}

struct PlainGreeting: Greeting {
    func greet(_ name: String) -> String { "Hello, \(name)." }
}

struct LoudGreeting: Greeting {
    func greet(_ name: String) -> String { "HELLO, \(name.uppercased())!" }
}

private enum GreetingKey: InjectionKey {
    static var currentValue: any Greeting { PlainGreeting() }
}

extension InjectedValues {
    var greeting: any Greeting {
        get { Self[GreetingKey.self] }
        set { Self[GreetingKey.self] = newValue }
    }
}

struct Greeter {
    @Injected(\.greeting) var greeting

    func run() -> String { greeting.greet("Injected") }
}

let greeter = Greeter()
print(greeter.run())
withInjectedValues {
    $0.greeting = LoudGreeting()
} operation: {
    print(greeter.run())
}
