import Injected
import InjectedTesting
import ReadingList
import Testing

@Suite("The settings", .injectedValues(strict: true) { $0.articlesAPI = MockAPI() })
@MainActor
struct SettingsModelTests {
    @Test("the settings show the style the launch code chose")
    func showTheLaunchChoice() {
        #expect(SettingsModel().dateStyle == .absolute)
        AppLaunch.configure(environment: ["READING_LIST_DATE_STYLE": "relative"])
        #expect(SettingsModel().dateStyle == .relative)
    }

    @Test("choosing a style changes what a feed made earlier shows")
    func choosingAStyleReachesEveryScreen() {
        let feed = FeedModel()
        let settings = SettingsModel()
        #expect(feed.published(sampleArticles[0]) == "2027-01-14")
        settings.choose(.relative)
        #expect(settings.dateStyle == .relative)
        #expect(feed.published(sampleArticles[0]) == "1 day ago")
    }

    @Test("a choice made in one test is not seen by another", arguments: SettingsModel.DateStyleChoice.allCases)
    func choicesStayInTheirTest(choice: SettingsModel.DateStyleChoice) async {
        #expect(SettingsModel().dateStyle == .absolute)
        SettingsModel().choose(choice)
        await Task.yield()
        #expect(SettingsModel().dateStyle == choice)
    }

    @Test("the launch code can move the app's files")
    func launchMovesTheFiles() {
        AppLaunch.configure(environment: ["READING_LIST_DIRECTORY": "/tmp/elsewhere"])
        #expect(InjectedValues[\.appDirectory].path == "/tmp/elsewhere")
    }
}
