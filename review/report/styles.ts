// The review page's only stylesheet, inlined: system fonts, one row per prompt with its takes side
// by side (each tile as wide as its video's aspect ratio needs at a fixed height), a details panel
// beside it (below it on a phone), and the large player over everything.
export const REPORT_CSS = `
:root {
  --bg: #f3f4f6; --card: #ffffff; --ink: #1c2128; --muted: #5b6470; --line: #dfe3e8;
  --accent: #3451b2; --ok: #1a7f37; --bad: #c62a2f; --warn: #9a6700; --off: #57606a; --unk: #8250df;
  --th: 132px; --panel: 280px;
  color-scheme: light;
}
* { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--ink); font: 14px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; font-size: 0.9em; }
a { color: var(--accent); }
header.top { background: var(--card); border-bottom: 1px solid var(--line); padding: 8px 16px 6px; display: flex; flex-wrap: wrap; align-items: center; gap: 6px 18px; }
.title { min-width: 0; flex: 1 1 320px; }
.brand { color: var(--muted); font-weight: 600; letter-spacing: .04em; text-transform: uppercase; font-size: 11px; }
h1 { margin: 0; font-size: 18px; line-height: 1.25; overflow-wrap: anywhere; }
.sub { margin: 0; color: var(--muted); font-size: 12px; overflow-wrap: anywhere; }
.stats { display: flex; flex-wrap: wrap; gap: 6px; margin: 0; padding: 0; list-style: none; }
.stat { background: var(--bg); border: 1px solid var(--line); border-radius: 8px; padding: 2px 10px; min-width: 64px; }
.stat a { color: inherit; text-decoration: none; display: block; }
.stat b { display: block; font-size: 16px; line-height: 1.25; font-variant-numeric: tabular-nums; }
.stat span { color: var(--muted); font-size: 10.5px; text-transform: uppercase; letter-spacing: .04em; }
.stat.succeeded b, .stat.kept b { color: var(--ok); } .stat.failed b, .stat.rejected b { color: var(--bad); } .stat.timed_out b { color: var(--warn); }
.stat.canceled b { color: var(--off); } .stat.unknown b { color: var(--unk); }
.stat.zero b { color: var(--muted); opacity: .55; }
.stat a span { text-decoration: underline dotted; } .stat a:hover { opacity: .8; }
.note { flex-basis: 100%; margin: 0; padding: 4px 10px; border-radius: 6px; background: #fff8e1; border: 1px solid #f0d68a; color: #5c4400; font-size: 13px; }
.filters { flex-basis: 100%; display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: center; font-size: 12px; color: var(--muted); }
.filters select { font: inherit; color: var(--ink); padding: 1px 4px; max-width: 14em; }
#shown { margin-left: auto; }
.layout { display: grid; grid-template-columns: minmax(0, 1fr) var(--panel); align-items: start; }
main { padding: 10px 12px 24px 16px; min-width: 0; }
h2 { font-size: 14px; margin: 0 0 6px; } h2 .count { color: var(--muted); font-weight: 500; }
#failures:empty { display: none; }
#failures { margin-bottom: 10px; }
.problems { list-style: none; margin: 0; padding: 0; background: var(--card); border: 1px solid #f1c4c6; border-radius: 8px; max-height: 9.5em; overflow-y: auto; font-size: 12.5px; scrollbar-width: thin; scrollbar-color: #c9a3a5 #fbeaea;
  /* Shadows at an edge with more beyond it: a list cut by its height looks cut, scrollbar or not. */
  background: linear-gradient(#fff 30%, rgba(255,255,255,0)) top / 100% 28px no-repeat local, linear-gradient(rgba(255,255,255,0), #fff 70%) bottom / 100% 28px no-repeat local,
    radial-gradient(farthest-side at 50% 0, rgba(110,26,29,.28), transparent) top / 100% 12px no-repeat scroll, radial-gradient(farthest-side at 50% 100%, rgba(110,26,29,.28), transparent) bottom / 100% 12px no-repeat scroll, #fff; }
.problems::-webkit-scrollbar { width: 10px; } .problems::-webkit-scrollbar-track { background: #fbeaea; border-radius: 8px; }
.problems::-webkit-scrollbar-thumb { background: #c9a3a5; border-radius: 8px; border: 2px solid #fbeaea; }
h2 .more { color: var(--muted); font-weight: 500; font-size: 12px; margin-left: 6px; }
.problem { padding: 4px 10px; border-top: 1px solid var(--line); background: transparent; }
.problem:first-child { border-top: 0; }
.problem a { font-weight: 600; text-decoration: none; color: var(--ink); }
.problem .meta { color: var(--muted); }
.reason { margin: 0; overflow-wrap: anywhere; }
.reason code { background: #f0f2f5; border-radius: 4px; padding: 0 4px; margin-right: 6px; }
#grid { display: flex; flex-wrap: wrap; gap: 8px; align-items: flex-start; }
.group { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 5px 7px 6px; max-width: 100%; }
.group header { display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 5px; font-size: 12px; width: 0; min-width: 100%; margin-bottom: 5px; }
.group header .gid { font-size: 13px; overflow-wrap: anywhere; }
.gprompt { flex-basis: 100%; color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; min-width: 0; }
.takes { display: flex; flex-wrap: wrap; gap: 6px; align-items: flex-start; }
.take { width: max(72px, calc(var(--th) * var(--ar))); max-width: 100%; border-radius: 6px; outline: none; cursor: zoom-in; position: relative; }
.frame { position: relative; height: var(--th); width: calc(var(--th) * var(--ar)); max-width: 100%; margin: 0 auto; border-radius: 5px; overflow: hidden;
  background: #dfe3e8 linear-gradient(135deg, #e9ecf0 25%, #dfe3e8 25%, #dfe3e8 50%, #e9ecf0 50%, #e9ecf0 75%, #dfe3e8 75%) 0 0 / 16px 16px; }
.frame img, .frame video { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: cover; display: block; }
.frame video { z-index: 1; background: #dfe3e8; }
.frame .dur { position: absolute; right: 3px; bottom: 3px; z-index: 2; background: rgba(0,0,0,.6); color: #fff; font-size: 10px; padding: 0 4px; border-radius: 3px; }
.take:not([data-state=succeeded]) .frame { background: #fbeaea; border: 1px solid #f1c4c6; padding: 4px; display: flex; flex-direction: column; gap: 3px; overflow: hidden; }
.why { font-size: 10.5px; line-height: 1.25; color: #6e1a1d; overflow-wrap: anywhere; overflow: hidden; }
.cap { display: flex; flex-wrap: wrap; align-items: center; gap: 2px 4px; margin-top: 3px; font-size: 11.5px; max-height: 34px; overflow: hidden; }
.chip { font-size: 10.5px; line-height: 1.35; padding: 0 5px; border-radius: 4px; background: #eef0f3; color: #394049; white-space: nowrap; max-width: 100%; overflow: hidden; text-overflow: ellipsis; }
.chip.var { background: #e6ecfb; color: #24397d; font-weight: 600; } .chip.model { background: #eef0f3; color: var(--muted); }
.chip.new { background: #fff1c2; color: #6b4a00; font-weight: 700; text-transform: uppercase; letter-spacing: .04em; }
.chip.earlier { background: #ececec; color: #4b4f55; }
.take[data-earlier] .frame { outline: 2px dashed #9aa1ab; outline-offset: -2px; }
.take.sel .frame { box-shadow: 0 0 0 3px var(--accent); }
.take[data-pick=keep] .frame { box-shadow: 0 0 0 3px var(--ok); }
.take[data-pick=keep].sel .frame { box-shadow: 0 0 0 3px var(--ok), 0 0 0 6px var(--accent); }
.take[data-pick=reject] .frame { opacity: .4; }
.mark { position: absolute; left: 3px; top: 3px; z-index: 2; font-size: 11px; line-height: 16px; font-weight: 700; border-radius: 3px; padding: 0 4px; color: #fff; }
.take[data-pick=keep] .mark::after { content: "\\2713 kept"; } .take[data-pick=keep] .mark { background: var(--ok); }
.take[data-pick=reject] .mark::after { content: "\\2717 rejected"; } .take[data-pick=reject] .mark { background: var(--bad); }
/* The player hides the page: at .88 the page's text showed through its title and counters on a phone. */
#player { position: fixed; inset: 0; z-index: 20; --par: 1.7778; background: rgba(12,14,18,.96); display: flex; align-items: center; justify-content: center; padding: 12px; }
.pbox { display: flex; flex-direction: column; gap: 6px; max-width: 100%; max-height: 100%; color: #e8ebef; }
.pbar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 10px; font-size: 13px; }
#ptitle { font-weight: 600; overflow-wrap: anywhere; flex: 1 1 200px; } #ppos { color: #aab2bd; } #ppick { color: #ffd479; }
.pbar button, .pfoot button { font: inherit; font-size: 13px; padding: 2px 10px; border-radius: 6px; border: 1px solid #59616c; background: #262b32; color: #e8ebef; cursor: pointer; }
.pstage { display: flex; justify-content: center; }
#pvideo { display: block; width: min(94vw, 1280px, calc((100vh - 130px) * var(--par))); aspect-ratio: var(--par); height: auto; background: #000; border-radius: 6px; box-shadow: 0 0 0 3px transparent; }
#player[data-pick=keep] #pvideo { box-shadow: 0 0 0 3px var(--ok); } #player[data-pick=reject] #pvideo { box-shadow: 0 0 0 3px var(--bad); }
#preason { max-width: 40em; padding: 24px; background: #3a2224; border-radius: 6px; margin: 0; }
.pfoot { display: flex; flex-wrap: wrap; align-items: center; gap: 6px; }
.pkeys { color: #aab2bd; font-size: 12px; margin-left: auto; }
body.player-open { overflow: hidden; } body.player-open #panel { display: none; }
.take .info { display: none; }
.badge { display: inline-block; align-self: flex-start; border-radius: 999px; padding: 0 7px; font-size: 11px; font-weight: 600; color: #fff; white-space: nowrap; }
.badge.failed { background: var(--bad); } .badge.timed_out { background: var(--warn); }
.badge.canceled { background: var(--off); } .badge.unknown { background: var(--unk); } .badge.succeeded { background: var(--ok); }
.badge.blocked { background: var(--off); }
#panel { position: sticky; top: 0; max-height: 100vh; overflow: auto; border-left: 1px solid var(--line); background: var(--card); padding: 10px 12px; font-size: 13px; align-self: start; }
.keys { margin: 0 0 8px; color: var(--muted); font-size: 11.5px; }
#detail h3 { margin: 0 0 4px; font-size: 14px; overflow-wrap: anywhere; }
.label { display: block; color: var(--muted); font-size: 10.5px; text-transform: uppercase; letter-spacing: .05em; margin-top: 6px; }
.prompt { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 12em; overflow: auto; }
.prompt.enhanced { color: #30363d; border-left: 3px solid var(--line); padding-left: 6px; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 1px 10px; margin: 8px 0 0; font-size: 12px; }
.facts dt { color: var(--muted); } .facts dd { margin: 0; min-width: 0; overflow-wrap: anywhere; font-variant-numeric: tabular-nums; }
#actions { display: flex; flex-wrap: wrap; gap: 4px; margin: 0 0 10px; }
#actions button { font: inherit; font-size: 12px; padding: 2px 8px; }
#status { flex-basis: 100%; margin: 2px 0 0; color: var(--muted); }
.empty { color: var(--muted); margin: 0; }
footer { color: var(--muted); font-size: 11px; padding: 0 16px 20px; }
@media (max-width: 760px) {
  :root { --th: 92px; }
  header.top { padding: 8px 10px; }
  .title { flex-basis: 100%; }
  .stats { flex-wrap: wrap; gap: 4px; max-width: 100%; }
  .stat { min-width: 0; padding: 1px 7px; flex: none; } .stat b { font-size: 14px; display: inline; margin-right: 3px; }
  .stat.zero:not(.kept):not(.rejected), .stat.extra { display: none; }
  .filters { gap: 4px 10px; } .filters select { max-width: 10em; }
  #shown { margin-left: 0; flex-basis: 100%; }
  .pkeys { display: none; }
  #pvideo { width: min(94vw, calc((100vh - 170px) * var(--par))); }
  .pbar button { padding: 4px 14px; }
  #ptitle { flex-basis: 100%; }
  body:not(.has-sel) #panel { display: none; }
  .keys { display: none; }
  .layout { display: block; }
  main { padding: 8px 8px 32vh; }
  #panel { position: fixed; left: 0; right: 0; bottom: 0; top: auto; max-height: 30vh; border-left: 0; border-top: 1px solid var(--line); z-index: 4; box-shadow: 0 -2px 8px rgba(0,0,0,.08); }
  .group { flex: 1 1 100%; }
}
`;
