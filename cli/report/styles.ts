// The report's only stylesheet, inlined into the page: system fonts, dark text on a light page,
// a grid that goes from one column on a phone to as many 340 px cards as fit.
export const REPORT_CSS = `
:root {
  --bg: #f5f6f8; --card: #ffffff; --ink: #1c2128; --muted: #5b6470; --line: #dfe3e8;
  --accent: #3451b2; --ok: #1a7f37; --bad: #c62a2f; --warn: #9a6700; --off: #57606a; --unk: #8250df;
  color-scheme: light;
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
}
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 0.88em; }
a { color: var(--accent); }
.wrap { max-width: 1400px; margin: 0 auto; padding: 0 20px; }
header.top { background: var(--card); border-bottom: 1px solid var(--line); padding: 22px 0 18px; }
.brand { color: var(--muted); font-weight: 600; letter-spacing: .04em; text-transform: uppercase; font-size: 12px; }
h1 { margin: 2px 0 4px; font-size: 26px; line-height: 1.2; overflow-wrap: anywhere; }
.sub { margin: 0; color: var(--muted); font-size: 13px; overflow-wrap: anywhere; }
.stats { display: flex; flex-wrap: wrap; gap: 10px; margin: 16px 0 0; padding: 0; list-style: none; }
.stat { background: var(--bg); border: 1px solid var(--line); border-radius: 10px; padding: 8px 14px; min-width: 104px; }
.stat b { display: block; font-size: 22px; line-height: 1.2; font-variant-numeric: tabular-nums; }
.stat span { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.stat.succeeded b { color: var(--ok); } .stat.failed b { color: var(--bad); } .stat.timed_out b { color: var(--warn); }
.stat.canceled b { color: var(--off); } .stat.unknown b { color: var(--unk); }
.stat.zero b { color: var(--muted); opacity: .55; }
.note { margin: 14px 0 0; padding: 8px 12px; border-radius: 8px; background: #fff8e1; border: 1px solid #f0d68a; color: #5c4400; font-size: 14px; }
main { padding: 8px 0 40px; }
h2 { font-size: 18px; margin: 26px 0 12px; }
h2 .count { color: var(--muted); font-weight: 500; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(340px, 100%), 1fr)); gap: 18px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 12px; overflow: hidden; display: flex; flex-direction: column; box-shadow: 0 1px 2px rgba(27,31,36,.04); }
.card video, .card img.placeholder { display: block; width: 100%; aspect-ratio: 16 / 9; background: #111; object-fit: contain; }
.card img.placeholder { background: #e9ecf0; }
.card .body { padding: 12px 14px 14px; display: flex; flex-direction: column; gap: 8px; min-width: 0; }
.card h3 { margin: 0; font-size: 15px; display: flex; gap: 8px; align-items: baseline; min-width: 0; }
.card h3 .idx { color: var(--muted); font-weight: 500; font-variant-numeric: tabular-nums; }
.card h3 a { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.label { display: block; color: var(--muted); font-size: 11px; text-transform: uppercase; letter-spacing: .05em; margin-bottom: 1px; }
.prompt { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 9.5em; overflow: auto; }
.prompt.enhanced { color: #30363d; font-size: 14px; border-left: 3px solid var(--line); padding-left: 8px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 2px 0 0; font-size: 13px; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
.missing { color: var(--bad); font-size: 13px; margin: 0; }
.badge { display: inline-block; border-radius: 999px; padding: 1px 9px; font-size: 12px; font-weight: 600; color: #fff; white-space: nowrap; }
.badge.failed { background: var(--bad); } .badge.timed_out { background: var(--warn); }
.badge.canceled { background: var(--off); } .badge.unknown { background: var(--unk); } .badge.succeeded { background: var(--ok); }
.problems { list-style: none; margin: 0; padding: 0; background: var(--card); border: 1px solid var(--line); border-radius: 12px; }
.problem { padding: 12px 16px; border-top: 1px solid var(--line); display: grid; gap: 4px; }
.problem:first-child { border-top: 0; }
.problem .head { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: center; font-size: 14px; }
.problem .head .idx { font-weight: 600; }
.problem .head .meta { color: var(--muted); font-size: 13px; }
.reason { margin: 0; overflow-wrap: anywhere; }
.reason code { background: #f0f2f5; border-radius: 4px; padding: 1px 5px; margin-right: 6px; }
.problem .prompt { color: var(--muted); font-size: 13px; max-height: 4.5em; }
.empty { color: var(--muted); margin: 0; }
footer { color: var(--muted); font-size: 12px; padding: 0 0 28px; }
@media (max-width: 560px) { h1 { font-size: 21px; } .stat { min-width: 0; flex: 1 1 40%; } .wrap { padding: 0 12px; } }
`;
