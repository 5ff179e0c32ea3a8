import Accounts
import Foundation
import TestSupport
import Testing

/// The on-call console in a real browser (Debian's headless Chromium), against a database the pipeline filled: a
/// purchase mirrored, another one's notification dead-lettered (its product was not mapped yet). Each page loads
/// without a console error, at 1280 px and at 360 px without sideways scrolling, the keyboard reaches the content,
/// and a click on Retry — confirmed in the page's dialog — puts the dead letter back in the queue, where the worker
/// runs it under its own id. Screenshots of each page land where `Page.saveScreenshot` puts them; the README shows
/// them.
@Suite(.browser) struct ConsoleBrowserTests {
    @Test func onCallFindsTheDeadLetterRetriesItAndReadsThePurchasesStory() async throws {
        var options = Pipeline.Options()
        options.mappedProducts = ["pro.monthly"]
        try await Pipeline.with(options) { pipeline in
            let paying = try await pipeline.customer()
            let mirrored = try await pipeline.simulator.subscribe(productId: "pro.monthly", price: 9_990, currency: "USD",
                                                                  appAccountToken: paying.token)
            _ = try await pipeline.simulator.renew(mirrored.originalTransactionId)
            let waiting = try await pipeline.customer()
            let unmapped = try await pipeline.simulator.subscribe(productId: "pro.yearly", price: 99_990, currency: "USD",
                                                                  appAccountToken: waiting.token)
            try await pipeline.settle()
            let deadLetterID: Int64 = try await pipeline.database.pool.query("SELECT id FROM dead_letters")[0].decode(0)

            try await ConsoleHarness.with(pipeline.database) { console in
                let base = console.baseURL
                let browser = try Browser.shared
                try await browser.withPage(width: 1280, height: 900) { page in
                    try await page.goto(base + "/")
                    #expect(try await page.text("h1") == "Queue")
                    _ = try await page.saveScreenshot("console-queue")

                    try await page.goto(base + "/dead-letters")
                    #expect(try await page.text("tbody").contains("is not mapped"))
                    _ = try await page.saveScreenshot("console-dead-letters")
                    try await page.clickAndWaitForNavigation("a[href='/dead-letters/\(deadLetterID)']")
                    #expect(try await page.text("main").contains(unmapped.originalTransactionId))
                    #expect(try await page.text("main").contains("verified"))
                    _ = try await page.saveScreenshot("console-dead-letter")

                    // The cause fixed, the dead letter retried from its page, confirmed in the dialog.
                    try await pipeline.database.pool.transaction { db in
                        try Catalog.mapProduct(connectionID: pipeline.connection.id, productID: "pro.yearly",
                                               planPriceID: pipeline.planPrices["pro.yearly"]!, on: db)
                    }
                    page.acceptDialogs(true)
                    try await page.clickAndWaitForNavigation("form[action='/dead-letters/\(deadLetterID)/retry'] button")
                    #expect(page.dialogs.count == 1)
                    #expect(try await page.text(".notice").contains("1 dead letter(s) back in the queue"))
                    try await eventually("the retried notification mirrored under its own job id") {
                        try await pipeline.count("SELECT count(*) FROM notification_receipts WHERE job_id = $1 AND outcome = 'mirrored'",
                                                 [deadLetterID]) == 1
                    }
                    #expect(try await pipeline.count("SELECT count(*) FROM dead_letters") == 0)
                    #expect(try await pipeline.count("""
                        SELECT count(*) FROM operator_actions WHERE dead_letter_id = $1 AND action = 'retry' AND operator = $2
                        """, [deadLetterID, ConsoleHarness.localOperator]) == 1)
                    _ = try await page.saveScreenshot("console-retried")

                    // The paying customer's purchase, found by its lineage from the search form.
                    try await page.goto(base + "/purchases")
                    try await page.fill("input[name=q]", mirrored.originalTransactionId)
                    try await page.clickAndWaitForNavigation("form[role=search] button")
                    #expect(try await page.text("h1").hasPrefix("Purchase "))
                    #expect(try await page.text("main").contains("9.99 USD"))
                    #expect(try await page.text("dl.facts").contains("pro until"), "the customer's entitlement now")
                    #expect(try await page.text("ol.timeline").contains("charge booked"))
                    _ = try await page.saveScreenshot("console-purchase")
                    try await page.expectNoConsoleErrors()
                }

                // On a phone: every page fits 360 px (wide tables scroll inside their frame), and Tab first reaches
                // the link that skips to the content.
                try await browser.withPage(width: 360, height: 740) { page in
                    for path in ["/", "/dead-letters", "/purchases?q=\(mirrored.originalTransactionId)"] {
                        try await page.goto(base + path)
                        #expect(try await page.evaluate("document.documentElement.scrollWidth") == 360, "\(path)")
                    }
                    _ = try await page.saveScreenshot("console-purchase-360")
                    try await page.goto(base + "/dead-letters")
                    try await page.press(.tab)
                    #expect(try await page.evaluate("document.activeElement.textContent") == "Skip to content")
                    try await page.expectNoConsoleErrors()
                }
            }
        }
    }
}
