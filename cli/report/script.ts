// The review page's one script (docs/review.md): filters, selection, keyboard, play on hover or
// click, and, when `reelflow review` serves the page, picks and live cards. It is a constant, so the
// page's Content-Security-Policy names it by hash and no other script can run. It inserts only
// HTML the server rendered (every value escaped by cli/report/escape.ts) and sets everything else
// as text.
import { createHash } from 'node:crypto';

export const PAGE_SCRIPT = `
(function () {
  'use strict';
  var live = document.body.getAttribute('data-mode') === 'live';
  var grid = document.getElementById('grid');
  var detail = document.getElementById('detail');
  var statusLine = document.getElementById('status');
  var selected = null;
  var playing = null;
  var hoverTimer = 0;
  var filters = { state: '', model: '', vars: {} };

  function tiles() { return Array.prototype.slice.call(grid.querySelectorAll('.take')); }
  function visible() { return tiles().filter(function (t) { return !t.hidden && !t.closest('.group').hidden; }); }
  function byKey(key) { return tiles().filter(function (t) { return t.getAttribute('data-key') === key; })[0] || null; }
  function say(text) { if (statusLine) statusLine.textContent = text; }

  function matches(t) {
    var s = filters.state;
    if (s.indexOf('pick:') === 0) {
      if ((t.getAttribute('data-pick') || 'none') !== s.slice(5)) return false;
    } else if (s && t.getAttribute('data-state') !== s) return false;
    if (filters.model && t.getAttribute('data-model') !== filters.model) return false;
    var names = Object.keys(filters.vars);
    if (names.length) {
      var vars = {};
      try { vars = JSON.parse(t.getAttribute('data-vars') || '{}'); } catch (e) { vars = {}; }
      for (var i = 0; i < names.length; i++) if (vars[names[i]] !== filters.vars[names[i]]) return false;
    }
    return true;
  }

  function applyFilters() {
    var shown = 0;
    var total = 0;
    Array.prototype.forEach.call(grid.querySelectorAll('.group'), function (g) {
      var any = false;
      Array.prototype.forEach.call(g.querySelectorAll('.take'), function (t) {
        var ok = matches(t);
        t.hidden = !ok;
        total++;
        if (ok) { any = true; shown++; }
      });
      g.hidden = !any;
    });
    var count = document.getElementById('shown');
    if (count) count.textContent = shown === total ? total + ' takes' : shown + ' of ' + total + ' takes shown';
    if (selected && (selected.hidden || !selected.isConnected)) select(null);
  }

  function readFilters() {
    filters = { state: '', model: '', vars: {} };
    Array.prototype.forEach.call(document.querySelectorAll('#filters select'), function (s) {
      var kind = s.getAttribute('data-filter');
      if (kind === 'state') filters.state = s.value;
      else if (kind === 'model') filters.model = s.value;
      else if (kind === 'var' && s.value) filters.vars[s.getAttribute('data-name')] = s.value;
    });
    applyFilters();
  }
  document.addEventListener('change', function (e) { if (e.target.closest && e.target.closest('#filters')) readFilters(); });
  document.addEventListener('submit', function (e) { e.preventDefault(); });

  function pickText(t) {
    var v = t.getAttribute('data-pick');
    var note = t.getAttribute('data-note');
    if (!v) return 'not picked';
    return (v === 'keep' ? 'kept' : 'rejected') + (note ? ': ' + note : '');
  }

  function select(t, scroll) {
    if (selected) selected.classList.remove('sel');
    selected = t;
    detail.textContent = '';
    document.body.classList.toggle('has-sel', !!t);
    if (!t) { say(''); return; }
    t.classList.add('sel');
    var info = t.querySelector('.info');
    if (info) detail.appendChild(info.cloneNode(true));
    say(pickText(t));
    if (scroll !== false) t.scrollIntoView({ block: 'nearest', inline: 'nearest' });
    t.focus({ preventScroll: true });
  }

  function stop(t) {
    var v = t.querySelector('video');
    if (v) { v.pause(); v.removeAttribute('src'); v.load(); v.remove(); }
    t.classList.remove('playing');
    if (playing === t) playing = null;
  }

  function play(t, on) {
    var v = t.querySelector('video');
    if (on === undefined) on = !v || v.paused;
    if (!on) { stop(t); return; }
    var src = t.getAttribute('data-video');
    if (!src) return;
    if (playing && playing !== t) stop(playing);
    if (!v) {
      v = document.createElement('video');
      v.muted = true;
      v.loop = true;
      v.playsInline = true;
      v.preload = 'auto';
      v.src = src;
      t.querySelector('.frame').insertBefore(v, t.querySelector('.frame').firstChild);
    }
    playing = t;
    t.classList.add('playing');
    var p = v.play();
    if (p && p.catch) p.catch(function () { return undefined; });
  }

  grid.addEventListener('click', function (e) {
    var t = e.target.closest('.take');
    if (!t) return;
    select(t, false);
    play(t);
  });
  grid.addEventListener('mouseover', function (e) {
    var t = e.target.closest('.take');
    if (!t || t === playing || (e.relatedTarget && t.contains(e.relatedTarget))) return;
    clearTimeout(hoverTimer);
    hoverTimer = setTimeout(function () { play(t, true); }, 250);
  });
  grid.addEventListener('mouseout', function (e) {
    var t = e.target.closest('.take');
    if (!t || (e.relatedTarget && t.contains(e.relatedTarget))) return;
    clearTimeout(hoverTimer);
    if (t === playing) stop(t);
  });

  function vertical(list, i, dir) {
    if (i < 0) return 0;
    var cur = list[i].getBoundingClientRect();
    var cx = cur.left + cur.width / 2;
    var rowTop = null;
    var best = -1;
    var bestDx = Infinity;
    list.forEach(function (t, j) {
      var r = t.getBoundingClientRect();
      var beyond = dir > 0 ? r.top >= cur.bottom - 1 : r.bottom <= cur.top + 1;
      if (!beyond) return;
      var edge = dir > 0 ? r.top : r.bottom;
      if (rowTop === null || (dir > 0 ? edge < rowTop - 1 : edge > rowTop + 1)) { rowTop = edge; best = -1; bestDx = Infinity; }
      if (Math.abs(edge - rowTop) > 1) return;
      var dx = Math.abs(r.left + r.width / 2 - cx);
      if (dx < bestDx) { bestDx = dx; best = j; }
    });
    return best < 0 ? i : best;
  }

  function setPick(key, verdict, note) {
    var t = byKey(key);
    if (!t) return;
    if (verdict === 'clear') { t.removeAttribute('data-pick'); t.removeAttribute('data-note'); }
    else { t.setAttribute('data-pick', verdict); if (note) t.setAttribute('data-note', note); else t.removeAttribute('data-note'); }
    var kept = 0;
    var rejected = 0;
    tiles().forEach(function (x) { var v = x.getAttribute('data-pick'); if (v === 'keep') kept++; if (v === 'reject') rejected++; });
    var k = document.querySelector('[data-stat=kept] b');
    var r = document.querySelector('[data-stat=rejected] b');
    if (k) k.textContent = String(kept);
    if (r) r.textContent = String(rejected);
    if (t === selected) say(pickText(t));
    if (filters.state.indexOf('pick:') === 0) applyFilters();
  }

  function decide(verdict) {
    if (!live || !selected) return;
    var t = selected;
    var note;
    if (verdict === 'note') {
      note = window.prompt('Note for this take (kept with its pick)', t.getAttribute('data-note') || '');
      if (note === null) return;
      verdict = t.getAttribute('data-pick') || 'keep';
    }
    say('saving…');
    fetch('picks', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: t.getAttribute('data-key'), verdict: verdict, note: note || undefined })
    }).then(function (res) {
      if (!res.ok) throw new Error('HTTP ' + res.status);
      return res.json();
    }).then(function (p) {
      setPick(p.key, p.verdict, p.note);
    }).catch(function (err) { say('not saved: ' + err.message); });
  }

  document.getElementById('actions').addEventListener('click', function (e) {
    var b = e.target.closest('button[data-verdict]');
    if (b) decide(b.getAttribute('data-verdict'));
  });

  document.addEventListener('keydown', function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === 'SELECT' || tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'BUTTON') return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var list = visible();
    if (!list.length) return;
    var i = selected ? list.indexOf(selected) : -1;
    var next = null;
    switch (e.key) {
      case 'ArrowRight': next = list[i < 0 ? 0 : Math.min(list.length - 1, i + 1)]; break;
      case 'ArrowLeft': next = list[i < 0 ? 0 : Math.max(0, i - 1)]; break;
      case 'ArrowDown': next = list[vertical(list, i, 1)]; break;
      case 'ArrowUp': next = list[vertical(list, i, -1)]; break;
      case ' ': case 'Enter': if (selected) play(selected); break;
      case 'k': decide('keep'); break;
      case 'x': decide('reject'); break;
      case 'u': decide('clear'); break;
      case 'n': decide('note'); break;
      case 'Escape': if (playing) stop(playing); break;
      default: return;
    }
    e.preventDefault();
    if (next) { if (playing && playing !== next) stop(playing); select(next); }
  });

  function fragment(html) {
    var tpl = document.createElement('template');
    tpl.innerHTML = html;
    return tpl.content.firstElementChild;
  }

  function keepFilters(html) {
    var form = document.getElementById('filters');
    var before = {};
    Array.prototype.forEach.call(form.querySelectorAll('select'), function (s) { before[s.getAttribute('data-filter') + '/' + (s.getAttribute('data-name') || '')] = s.value; });
    form.innerHTML = html;
    Array.prototype.forEach.call(form.querySelectorAll('select'), function (s) {
      var v = before[s.getAttribute('data-filter') + '/' + (s.getAttribute('data-name') || '')];
      if (v !== undefined) s.value = v;
    });
  }

  function upsert(d) {
    var tile = fragment(d.tile);
    var old = byKey(d.key);
    if (old) {
      var wasSelected = old === selected;
      if (old === playing) stop(old);
      old.replaceWith(tile);
      if (wasSelected) { selected = null; select(tile, false); }
      return;
    }
    var group = document.getElementById(d.groupId);
    if (group) { group.querySelector('.takes').appendChild(tile); return; }
    var empty = document.getElementById('empty');
    if (empty) empty.remove();
    // Groups keep the job's order: a new one goes before the first group of a later item.
    var added = fragment(d.group);
    var index = Number(added.getAttribute('data-index'));
    var later = Array.prototype.filter.call(grid.querySelectorAll('.group'), function (g) { return Number(g.getAttribute('data-index')) > index; })[0];
    grid.insertBefore(added, later || null);
  }

  if (live && window.EventSource) {
    var events = new EventSource('events?since=' + (document.body.getAttribute('data-version') || '0'));
    events.addEventListener('take', function (ev) { upsert(JSON.parse(ev.data)); });
    events.addEventListener('summary', function (ev) {
      var d = JSON.parse(ev.data);
      document.getElementById('stats').innerHTML = d.stats;
      document.getElementById('failures').innerHTML = d.failures;
      document.getElementById('sub').textContent = d.sub;
      keepFilters(d.filters);
      readFilters();
      document.body.setAttribute('data-rows', String(d.rows));
    });
    events.addEventListener('pick', function (ev) { var d = JSON.parse(ev.data); setPick(d.key, d.verdict, d.note); });
  }

  readFilters();
  document.body.setAttribute('data-ready', '1');
})();
`;

/** The CSP source that allows exactly this script. */
export const PAGE_SCRIPT_HASH = `sha256-${createHash('sha256').update(PAGE_SCRIPT, 'utf8').digest('base64')}`;
