import Injected
import Testing

/// `@Injected` works in every placement projects use, and each access resolves again.
@Suite("Property wrapper placements")
struct PropertyWrapperTests {
    @Test("a struct property without a type annotation reads the current override")
    func structWithoutAnnotation() {
        inFreshScope {
            let holder = StructHolder()
            #expect(holder.read() == "default")
            InjectedValues[\.placement] = "override"
            #expect(holder.read() == "override")
        }
    }

    @Test("a class property with the attribute on its own line reads and writes")
    func classOwnLine() {
        inFreshScope {
            let holder = ClassHolder()
            holder.value = "from class"
            #expect(InjectedValues[\.placement] == "from class")
        }
    }

    @Test("an actor property reads the current override")
    func actorProperty() async {
        await inFreshScope {
            let holder = ActorHolder()
            InjectedValues[\.placement] = "actor"
            #expect(await holder.read() == "actor")
        }
    }

    @Test("a main-actor class property reads the current override")
    @MainActor
    func mainActorClass() {
        inFreshScope {
            let holder = MainActorHolder()
            InjectedValues[\.placement] = "main actor"
            #expect(holder.value == "main actor")
        }
    }

    @Test("a static property of a main-actor type reads the current override")
    @MainActor
    func staticProperty() {
        inFreshScope {
            InjectedValues[\.placement] = "static"
            #expect(StaticHolder.value == "static")
        }
    }

    @Test("a local variable reads and writes")
    func localVariable() {
        inFreshScope {
            @Injected(\.placement) var local
            local = "local"
            #expect(InjectedValues[\.placement] == "local")
            #expect(local == "local")
        }
    }

    @Test("a generic typealias of the wrapper works as the wrapper")
    func genericTypealias() {
        inFreshScope {
            let holder = TypealiasHolder()
            InjectedValues[\.placement] = "typealias"
            #expect(holder.value == "typealias")
        }
    }

    @Test("a wrapper of a Sendable value can cross into another task")
    func sendableWrapper() async {
        await inFreshScope {
            let wrapper = Injected(\.placement)
            InjectedValues[\.placement] = "sent"
            let value = await Task { @Sendable in wrapper.wrappedValue }.value
            #expect(value == "sent")
        }
    }
}

private typealias Inject<T> = Injected<T>

private struct StructHolder {
    @Injected(\.placement) private var value

    func read() -> String { value }
}

private final class ClassHolder {
    @Injected(\.placement)
    var value: String
}

private actor ActorHolder {
    @Injected(\.placement) var value: String

    func read() -> String { value }
}

@MainActor
private final class MainActorHolder {
    @Injected(\.placement) var value
}

@MainActor
private enum StaticHolder {
    @Injected(\.placement) static var value
}

private struct TypealiasHolder {
    @Inject(\.placement) var value: String
}

private enum PlacementKey: ReadOnlyInjectionKey {
    static let currentValue = "default"
}

extension InjectedValues {
    fileprivate var placement: String {
        get { Self[PlacementKey.self] }
        set { Self[PlacementKey.self] = newValue }
    }
}
