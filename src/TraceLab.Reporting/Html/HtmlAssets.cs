namespace TraceLab.Reporting.Html;

/// <summary>The page's inline CSS and script: report.html loads nothing from anywhere.</summary>
internal static class HtmlAssets
{
    public const string Css = """
        :root { --run:#2e7d32; --ready:#f9a825; --blocked:#cfd8dc; --episode:#7e57c2; --wake:#1565c0;
            --handoff:#6a1b9a; --futile:#d32f2f; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
            color: #212121; background: #fafafa; }
        main { max-width: 1320px; margin: 0 auto; padding: 20px 28px 40px; }
        h1 { font-size: 24px; margin: 8px 0 12px; }
        h2 { font-size: 19px; margin: 28px 0 10px; padding-bottom: 4px; border-bottom: 2px solid #e0e0e0; }
        h3 { font-size: 16px; margin: 20px 0 8px; }
        ul { margin: 6px 0 12px; padding-left: 22px; }
        code { font: 12.5px ui-monospace, "DejaVu Sans Mono", monospace; background: #eeeeee; padding: 1px 4px;
            border-radius: 3px; word-break: break-all; }
        .table-wrap { width: fit-content; max-width: 100%; overflow-x: auto; margin: 8px 0 16px;
            border: 1px solid #e0e0e0; border-radius: 6px; background: #fff; }
        table { border-collapse: collapse; font-size: 12.5px; white-space: nowrap; }
        th, td { padding: 4px 9px; border-bottom: 1px solid #eeeeee; text-align: left; }
        th { background: #f5f5f5; font-weight: 600; position: sticky; top: 0; }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
        tbody tr:nth-child(even) { background: #fcfcfc; }
        tbody tr:hover { background: #e3f2fd; }
        .card { background: #fff; border: 1px solid #e0e0e0; border-radius: 8px; padding: 14px 16px;
            margin: 12px 0 18px; }
        .timeline-scroll { overflow-x: auto; }
        .legend { display: flex; flex-wrap: wrap; gap: 16px; align-items: center; margin: 4px 0 10px; font-size: 13px; }
        .legend span { display: inline-flex; align-items: center; gap: 6px; }
        .sw { width: 16px; height: 12px; border-radius: 2px; display: inline-block; }
        .sw.run { background: var(--run); } .sw.ready { background: var(--ready); }
        .sw.blocked { background: var(--blocked); }
        .sw.episode { background: var(--episode); } .sw.wake { background: var(--wake); height: 3px; }
        .sw.handoff { background: var(--handoff); height: 3px; }
        .sw.mix { background: linear-gradient(var(--run) 0 34%, var(--ready) 34% 67%, var(--blocked) 67%); }
        .sw.futile { background: var(--futile); width: 10px; height: 10px; border-radius: 50%; }
        .controls label { margin-right: 14px; font-size: 13px; cursor: pointer; }
        .note { color: #616161; font-size: 13px; }
        #timeline { display: block; font: 11px system-ui, "DejaVu Sans", sans-serif; }
        #timeline .tl-axis line { stroke: #9e9e9e; stroke-width: 1; }
        #timeline .tl-axis line.grid { stroke: #eeeeee; }
        #timeline .tl-axis text { fill: #616161; }
        #timeline .tl-axis text.unit { font-style: italic; }
        #timeline .row-label, #timeline .obj-label { fill: #212121; font-size: 12px; }
        #timeline .obj-label { fill: var(--episode); font-weight: 600; }
        #timeline .lane { fill: #f5f5f5; }
        #timeline .seg.run, #timeline .mix .run { fill: var(--run); }
        #timeline .seg.ready, #timeline .mix .ready { fill: var(--ready); }
        #timeline .seg.blocked, #timeline .mix .blocked { fill: var(--blocked); }
        #timeline .episode { fill: var(--episode); }
        #timeline .episode-band { fill: var(--episode); opacity: 0.09; pointer-events: none; }
        #timeline line.wake { stroke: var(--wake); stroke-width: 1; opacity: 0.75; }
        #timeline line.wake.handoff { stroke: var(--handoff); }
        #timeline .wake-ext { fill: var(--wake); }
        #timeline .futile { fill: var(--futile); stroke: #fff; stroke-width: 1; }
        #timeline g.tl-row:hover .lane { fill: #e3f2fd; }
        figure { margin: 12px 0 20px; }
        figure svg, figure img { max-width: 100%; height: auto; } figcaption { font-weight: 600; margin-bottom: 6px; }
        footer { margin-top: 28px; color: #757575; font-size: 12px; }
        """;

    /// <summary>
    /// Wires the toggles and marks the document: data-ready="1" once done, data-error="…" on any script error, and
    /// data-timeline-rows with the rows drawn, and after load data-charts-drawn with the chart images the browser
    /// decoded (what the headless-Chromium test reads from the dumped DOM).
    /// </summary>
    public const string Script = """
        (function () {
          var root = document.documentElement;
          window.addEventListener('error', function (e) { root.setAttribute('data-error', String(e.message || e)); });
          function ready() {
            try {
              var svg = document.getElementById('timeline');
              root.setAttribute('data-timeline-rows', String(svg ? svg.querySelectorAll('g.tl-row').length : 0));
              var boxes = document.querySelectorAll('input[data-toggle]');
              for (var i = 0; i < boxes.length; i++) {
                boxes[i].addEventListener('change', function (ev) {
                  var box = ev.target, els = document.querySelectorAll(box.getAttribute('data-toggle'));
                  for (var j = 0; j < els.length; j++) els[j].style.display = box.checked ? '' : 'none';
                });
              }
              root.setAttribute('data-ready', '1');
            } catch (err) {
              root.setAttribute('data-error', String(err));
            }
          }
          if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', ready); else ready();
          window.addEventListener('load', function () {
            var imgs = document.querySelectorAll('figure.chart img'), drawn = 0;
            for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) drawn++;
            root.setAttribute('data-charts-drawn', String(drawn));
          });
        })();
        """;
}
