import Injected
import Testing

/// Key and wrapper forms that only Swift 5 mode accepts compile and behave as the article describes.
@Suite("Swift 5 key forms")
struct Swift5KeyFormTests {
    @Test("a plain static var key, public in either modifier order, reads its stored default")
    func plainStaticVar() {
        withInjectedValues(fresh: true, { _ in }) {
            #expect(InjectedValues[PublicStaticKey.self] == "public static")
            #expect(InjectedValues[StaticPublicKey.self] == "static public")
        }
    }

    @Test("a plain optional static var with no initial value reads nil, then a direct write")
    func optionalDirectWrite() {
        withInjectedValues(fresh: true, { _ in }) {
            #expect(InjectedValues[ChatClientKey.self] == nil)
            ChatClientKey.currentValue = ChatClient()
            #expect(InjectedValues[ChatClientKey.self] === ChatClientKey.currentValue)
        }
    }

    @Test("a wrapper on a plain static property reads and writes")
    func staticWrapper() {
        withInjectedValues(fresh: true, { _ in }) {
            Settings.theme = "dark"
            #expect(InjectedValues[\.theme] == "dark")
            #expect(Settings.theme == "dark")
        }
    }
}

final class ChatClient {}

/// A public key declared `public static var`.
public struct PublicStaticKey: InjectionKey {
    /// The key's default.
    public static var currentValue: String = "public static"
}

/// A public key declared `static public var`.
public struct StaticPublicKey: InjectionKey {
    /// The key's default.
    static public var currentValue: String = "static public"
}

private struct ChatClientKey: InjectionKey {
    static var currentValue: ChatClient?
}

private struct ThemeKey: InjectionKey {
    static var currentValue = "light"
}

private enum Settings {
    @Injected(\.theme) static var theme
}

extension InjectedValues {
    fileprivate var theme: String {
        get { self[ThemeKey.self] }
        set { self[ThemeKey.self] = newValue }
    }
}
