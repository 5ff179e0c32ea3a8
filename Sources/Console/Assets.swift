import Foundation
import HTTP

/// The console's one stylesheet and one script, compiled in and served by the console itself: nothing loads from
/// another host (production networks often reach none), and the pages work without the script — it only adds
/// confirmation dialogs and a select-all box to forms that also work without it.
enum Assets {
    static let stylesheetPath = "/static/console.css"
    static let scriptPath = "/static/console.js"

    static func stylesheet() -> HTTPResponse {
        asset(css, type: "text/css; charset=utf-8")
    }

    static func script() -> HTTPResponse {
        asset(js, type: "text/javascript; charset=utf-8")
    }

    private static func asset(_ text: String, type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("Content-Type", type), ("X-Content-Type-Options", "nosniff"),
                                            ("Cache-Control", "max-age=300")],
                     body: Data(text.utf8))
    }

    private static let css = """
        :root { color-scheme: light; --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg: #f6f7f9; --accent: #1f5fbf;
                --bad: #b3261e; --ok: #1e7b34; --warn: #8a5a00; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 15px/1.45 "DejaVu Sans", system-ui, sans-serif; color: var(--fg); background: var(--bg); }
        a { color: var(--accent); }
        a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible,
        .scroll:focus-visible { outline: 3px solid #f0a500; outline-offset: 2px; }
        .skip { position: absolute; left: -999px; top: 0; background: #fff; padding: 8px; }
        .skip:focus { left: 8px; z-index: 2; }
        header { display: flex; flex-wrap: wrap; gap: 4px 16px; align-items: center; padding: 10px 16px; background: #1d2330;
                 color: #fff; }
        header .brand { font-weight: bold; }
        header nav { display: flex; flex-wrap: wrap; gap: 4px 14px; }
        header nav a { color: #cfe0ff; text-decoration: none; padding: 2px 0; }
        header nav a[aria-current] { color: #fff; border-bottom: 2px solid #fff; }
        header .who { margin-left: auto; color: #aab3c5; font-size: 13px; }
        main { padding: 12px 16px 40px; max-width: 1200px; }
        h1 { font-size: 22px; margin: 8px 0 14px; overflow-wrap: anywhere; }
        h2 { font-size: 17px; margin: 26px 0 8px; }
        .notice { background: #e7f3ea; border: 1px solid #9cc9a8; padding: 8px 12px; border-radius: 4px; }
        .warning { background: #fff4e0; border: 1px solid #e3b766; padding: 8px 12px; border-radius: 4px; }
        .empty { color: var(--muted); }
        .scroll { overflow-x: auto; background: #fff; border: 1px solid var(--line); border-radius: 4px; }
        table { border-collapse: collapse; width: 100%; font-size: 14px; }
        caption { text-align: left; padding: 6px 10px; color: var(--muted); font-size: 13px; }
        th, td { text-align: left; padding: 6px 10px; border-top: 1px solid var(--line); vertical-align: top;
                 white-space: nowrap; }
        th { background: #eef0f4; white-space: nowrap; }
        td.num, th.num { text-align: right; }
        code, pre, .mono { font-family: "DejaVu Sans Mono", monospace; font-size: 13px; }
        pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #fff; border: 1px solid var(--line); padding: 10px;
              border-radius: 4px; max-height: 420px; overflow: auto; }
        dl.facts { display: grid; grid-template-columns: minmax(110px, max-content) 1fr; gap: 4px 14px; background: #fff;
                   border: 1px solid var(--line); border-radius: 4px; padding: 10px 12px; margin: 0; }
        dl.facts dt { color: var(--muted); }
        dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        form.filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: flex-end; background: #fff;
                       border: 1px solid var(--line); border-radius: 4px; padding: 10px 12px; margin-bottom: 12px; }
        form.filters label { display: flex; flex-direction: column; font-size: 13px; color: var(--muted); }
        input, select, button { font: inherit; padding: 5px 8px; border: 1px solid #aab3c5; border-radius: 4px;
                                background: #fff; color: var(--fg); min-height: 34px; }
        input[type=checkbox] { min-height: 0; width: 18px; height: 18px; }
        button { background: var(--accent); color: #fff; border-color: var(--accent); cursor: pointer; }
        button.danger { background: var(--bad); border-color: var(--bad); }
        button.quiet { background: #fff; color: var(--accent); }
        .actions { display: flex; flex-wrap: wrap; gap: 8px; margin: 10px 0; align-items: center; }
        .pager { display: flex; gap: 16px; margin: 10px 0; }
        .tag { display: inline-block; padding: 0 6px; border-radius: 3px; font-size: 12px; background: #e6e9ef; }
        .tag.ok { background: #dff1e3; color: var(--ok); }
        .tag.bad { background: #fbe3e1; color: var(--bad); }
        .tag.warn { background: #fff0d6; color: var(--warn); }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 10px; }
        .card { background: #fff; border: 1px solid var(--line); border-radius: 4px; padding: 10px 12px; }
        .card .value { font-size: 24px; font-weight: bold; }
        .card .label { color: var(--muted); font-size: 13px; }
        .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(300px, 1fr)); gap: 10px; }
        figure { margin: 0; background: #fff; border: 1px solid var(--line); border-radius: 4px; padding: 10px; }
        figcaption { font-size: 13px; color: var(--muted); margin-bottom: 4px; }
        svg.chart { width: 100%; height: auto; display: block; }
        svg.chart rect.bar { fill: var(--accent); }
        svg.chart text { font-size: 10px; fill: var(--muted); }
        details { margin: 8px 0; }
        summary { cursor: pointer; color: var(--accent); }
        ol.timeline { list-style: none; padding: 0; margin: 0; background: #fff; border: 1px solid var(--line);
                      border-radius: 4px; }
        ol.timeline li { padding: 8px 12px; border-top: 1px solid var(--line); }
        ol.timeline li:first-child { border-top: 0; }
        ol.timeline .when { color: var(--muted); font-size: 13px; margin-right: 8px; }
        ol.timeline .what { font-weight: bold; }
        ol.timeline .detail { display: block; color: var(--muted); font-size: 13px; overflow-wrap: anywhere; }
        @media (max-width: 600px) { main { padding: 10px; } h1 { font-size: 19px; } header .who { margin-left: 0; } }
        """

    private static let js = """
        "use strict";
        // Buttons that change something ask first (their data-confirm, {n} the dead letters ticked); without this
        // script the server asks on a page of its own.
        document.addEventListener("submit", function (event) {
          var form = event.target;
          var button = event.submitter;
          var message = button && button.getAttribute("data-confirm");
          if (!message) { return; }
          var chosen = 0;
          for (var i = 0; i < form.elements.length; i += 1) {
            var element = form.elements[i];
            if (element.name === "id" && element.checked) { chosen += 1; }
          }
          if (button.hasAttribute("data-needs-selection") && chosen === 0) {
            event.preventDefault();
            window.alert("Tick at least one dead letter first.");
            return;
          }
          if (!window.confirm(message.replace("{n}", String(chosen)))) { event.preventDefault(); return; }
          var confirmed = document.createElement("input");
          confirmed.type = "hidden";
          confirmed.name = "confirmed";
          confirmed.value = "yes";
          form.appendChild(confirmed);
        });
        // A box that ticks every dead letter of its form.
        document.addEventListener("change", function (event) {
          var box = event.target;
          if (!box.form || !box.hasAttribute("data-select-all")) { return; }
          for (var i = 0; i < box.form.elements.length; i += 1) {
            var element = box.form.elements[i];
            if (element.name === "id") { element.checked = box.checked; }
          }
        });
        """
}
