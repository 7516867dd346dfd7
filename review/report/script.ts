// The review page's one script (docs/review.md): filters, selection, keyboard, a muted preview on
// hover, the large player (a take big, its siblings a key away), and, when `reelflow review` serves
// the page, picks and live rows. It is a constant, so the
// page's Content-Security-Policy names it by hash and no other script can run. It inserts only
// HTML the server rendered (every value escaped by review/report/escape.ts) and sets everything else
// as text.
import { createHash } from 'node:crypto';

export const PAGE_SCRIPT = `
(function () {
  'use strict';
  var live = document.body.getAttribute('data-mode') === 'live';
  var grid = document.getElementById('grid');
  var detail = document.getElementById('detail');
  var statusLine = document.getElementById('status');
  var player = document.getElementById('player');
  // The player's video element exists only while it is open: the page loads no video until one is played.
  var pvideo = null;
  var selected = null;
  var playing = null;
  var hoverTimer = 0;
  var filters = { state: '', model: '', vars: {} };

  function all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function tiles() { return all('.take', grid); }
  function shown(t) { return !t.hidden && !t.closest('.group').hidden; }
  function visible() { return tiles().filter(shown); }
  function byKey(key, file) {
    return tiles().filter(function (t) {
      return t.getAttribute('data-key') === key && (file ? t.getAttribute('data-file') === file : !t.hasAttribute('data-earlier'));
    })[0] || null;
  }
  function isOpen() { return !player.hidden; }
  function say(text) {
    if (statusLine) statusLine.textContent = text;
    var pp = document.getElementById('ppick');
    if (pp && isOpen()) pp.textContent = text;
  }

  function matches(t) {
    var s = filters.state;
    if (s === 'new') { if (!t.hasAttribute('data-new')) return false; }
    else if (s.indexOf('pick:') === 0) {
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
    var count = 0;
    var total = 0;
    all('.group', grid).forEach(function (g) {
      var any = false;
      all('.take', g).forEach(function (t) {
        var ok = matches(t);
        t.hidden = !ok;
        total++;
        if (ok) { any = true; count++; }
      });
      g.hidden = !any;
    });
    var out = document.getElementById('shown');
    if (out) out.textContent = count === total ? total + ' takes' : count + ' of ' + total + ' takes shown';
    if (selected && (!selected.isConnected || !shown(selected))) select(null);
  }

  function readFilters() {
    filters = { state: '', model: '', vars: {} };
    all('#filters select').forEach(function (s) {
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

  /** The take's name: its row's id and values, and its number. */
  function titleOf(t) {
    var g = t.closest('.group');
    var parts = all('.gid, .chip', g.querySelector('header')).map(function (c) { return c.textContent; });
    return parts.join(' · ') + ' · take ' + t.getAttribute('data-take') + (t.hasAttribute('data-earlier') ? ' (earlier request)' : '');
  }

  function select(t, scroll) {
    if (selected) selected.classList.remove('sel');
    selected = t;
    detail.textContent = '';
    document.body.classList.toggle('has-sel', !!t);
    if (!t) { say(''); return; }
    t.classList.add('sel');
    var h3 = document.createElement('h3');
    h3.textContent = titleOf(t);
    detail.appendChild(h3);
    var label = document.createElement('span');
    label.className = 'label';
    label.textContent = 'prompt';
    detail.appendChild(label);
    var prompt = document.createElement('p');
    prompt.className = 'prompt';
    prompt.textContent = t.closest('.group').querySelector('.gprompt').getAttribute('title') || '';
    detail.appendChild(prompt);
    var info = {};
    try { info = JSON.parse(t.getAttribute('data-info') || '{}'); } catch (e) { info = {}; }
    if (info.reason) { var r = document.createElement('p'); r.className = 'reason'; r.textContent = info.reason; detail.appendChild(r); }
    if (info.enhanced) {
      var el = document.createElement('span'); el.className = 'label'; el.textContent = 'rewritten prompt'; detail.appendChild(el);
      var ep = document.createElement('p'); ep.className = 'prompt enhanced'; ep.textContent = info.enhanced; detail.appendChild(ep);
    }
    var dl = document.createElement('dl');
    dl.className = 'facts';
    (info.facts || []).forEach(function (f) {
      var dt = document.createElement('dt'); dt.textContent = f[0]; dl.appendChild(dt);
      var dd = document.createElement('dd'); dd.textContent = f[1]; dl.appendChild(dd);
    });
    detail.appendChild(dl);
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

  /** A muted preview in the tile itself (hover). */
  function preview(t) {
    var src = t.getAttribute('data-video');
    if (!src || isOpen()) return;
    if (playing && playing !== t) stop(playing);
    if (t.querySelector('video')) return;
    var v = document.createElement('video');
    v.muted = true;
    v.loop = true;
    v.playsInline = true;
    v.preload = 'auto';
    v.src = src;
    t.querySelector('.frame').insertBefore(v, t.querySelector('.frame').firstChild);
    playing = t;
    t.classList.add('playing');
    var p = v.play();
    if (p && p.catch) p.catch(function () { return undefined; });
  }

  /** The large player on take t: its video big, its position among its siblings, its pick. */
  function open(t) {
    if (!t) return;
    if (playing) stop(playing);
    select(t, true);
    var src = t.getAttribute('data-video');
    var reason = document.getElementById('preason');
    if (!pvideo) {
      pvideo = document.createElement('video');
      pvideo.id = 'pvideo';
      pvideo.controls = true;
      pvideo.loop = true;
      pvideo.muted = true;
      pvideo.playsInline = true;
      pvideo.preload = 'auto';
      document.getElementById('pstage').insertBefore(pvideo, reason);
    }
    pvideo.pause();
    if (src) {
      pvideo.hidden = false;
      reason.hidden = true;
      player.style.setProperty('--par', String(parseFloat(t.style.getPropertyValue('--ar')) || 16 / 9));
      if (pvideo.getAttribute('src') !== src) pvideo.src = src;
      var p = pvideo.play();
      if (p && p.catch) p.catch(function () { return undefined; });
    } else {
      pvideo.removeAttribute('src');
      pvideo.load();
      pvideo.hidden = true;
      reason.hidden = false;
      var why = t.querySelector('.why');
      reason.textContent = why ? why.textContent : 'no video stored for this take';
    }
    var siblings = all('.take', t.closest('.group')).filter(shown);
    document.getElementById('ptitle').textContent = titleOf(t);
    document.getElementById('ppos').textContent = (siblings.indexOf(t) + 1) + ' of ' + siblings.length;
    player.setAttribute('data-pick', t.getAttribute('data-pick') || '');
    player.hidden = false;
    document.body.classList.add('player-open');
    say(pickText(t));
  }

  function close() {
    if (pvideo) {
      pvideo.pause();
      pvideo.removeAttribute('src');
      pvideo.load();
      pvideo.remove();
      pvideo = null;
    }
    player.hidden = true;
    document.body.classList.remove('player-open');
    if (selected) selected.focus({ preventScroll: true });
  }

  /** In the player: the sibling take dir steps away (← →), or the same place in the row dir rows away (↑ ↓). */
  function step(dir, across) {
    if (!selected) return;
    var g = selected.closest('.group');
    var siblings = all('.take', g).filter(shown);
    var i = siblings.indexOf(selected);
    if (!across) { open(siblings[Math.max(0, Math.min(siblings.length - 1, i + dir))]); return; }
    var rows = all('.group', grid).filter(function (x) { return !x.hidden; });
    var next = rows[rows.indexOf(g) + dir];
    if (!next) return;
    var takes = all('.take', next).filter(shown);
    open(takes[Math.min(takes.length - 1, Math.max(0, i))]);
  }

  grid.addEventListener('click', function (e) {
    var t = e.target.closest('.take');
    if (t) open(t);
  });
  grid.addEventListener('mouseover', function (e) {
    var t = e.target.closest('.take');
    if (!t || t === playing || (e.relatedTarget && t.contains(e.relatedTarget))) return;
    clearTimeout(hoverTimer);
    hoverTimer = setTimeout(function () { preview(t); }, 250);
  });
  grid.addEventListener('mouseout', function (e) {
    var t = e.target.closest('.take');
    if (!t || (e.relatedTarget && t.contains(e.relatedTarget))) return;
    clearTimeout(hoverTimer);
    if (t === playing) stop(t);
  });
  player.addEventListener('click', function (e) {
    if (e.target === player) { close(); return; }
    var b = e.target.closest('button');
    if (!b) return;
    var act = b.getAttribute('data-act');
    if (act === 'close') close();
    else if (act === 'prev') step(-1, false);
    else if (act === 'next') step(1, false);
    else if (b.hasAttribute('data-verdict')) decide(b.getAttribute('data-verdict'));
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

  function counters() {
    var kept = 0;
    var rejected = 0;
    var fresh = 0;
    tiles().forEach(function (x) {
      var v = x.getAttribute('data-pick');
      if (v === 'keep') kept++;
      if (v === 'reject') rejected++;
      if (x.hasAttribute('data-new')) fresh++;
    });
    [['kept', kept], ['rejected', rejected], ['new', fresh]].forEach(function (c) {
      var b = document.querySelector('[data-stat=' + c[0] + '] b');
      if (b) b.textContent = String(c[1]);
    });
  }

  function setPick(key, file, verdict, note) {
    var t = byKey(key, file);
    if (!t) return;
    if (verdict === 'clear') { t.removeAttribute('data-pick'); t.removeAttribute('data-note'); }
    else { t.setAttribute('data-pick', verdict); if (note) t.setAttribute('data-note', note); else t.removeAttribute('data-note'); }
    // Picked is seen: no longer new.
    t.removeAttribute('data-new');
    var mark = t.querySelector('.chip.new');
    if (mark) mark.remove();
    counters();
    if (t === selected) {
      say(pickText(t));
      if (isOpen()) player.setAttribute('data-pick', t.getAttribute('data-pick') || '');
    }
    if (filters.state === 'new' || filters.state.indexOf('pick:') === 0) applyFilters();
  }

  function decide(verdict) {
    if (!live || !selected) return;
    var t = selected;
    var note;
    if (verdict === 'note') {
      // A note goes with a pick and never makes one: an unpicked take stays unpicked.
      var standing = t.getAttribute('data-pick');
      if (!standing) { say('keep (k) or reject (x) this take first; a note goes with its pick'); return; }
      note = window.prompt('Note for this take (kept with its pick)', t.getAttribute('data-note') || '');
      if (note === null) return;
      verdict = standing;
    }
    say('saving…');
    var file = t.getAttribute('data-file');
    fetch('picks', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: t.getAttribute('data-key'), file: file || undefined, verdict: verdict, note: note || undefined })
    }).then(function (res) {
      if (!res.ok) throw new Error('HTTP ' + res.status);
      return res.json();
    }).then(function (p) {
      setPick(p.key, p.file, p.verdict, p.note);
    }).catch(function (err) { say('not saved: ' + err.message); });
  }

  document.getElementById('actions').addEventListener('click', function (e) {
    var b = e.target.closest('button[data-verdict]');
    if (b) decide(b.getAttribute('data-verdict'));
  });

  document.addEventListener('keydown', function (e) {
    var tag = e.target && e.target.tagName;
    if (tag === 'SELECT' || tag === 'INPUT' || tag === 'TEXTAREA') return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (isOpen()) {
      switch (e.key) {
        case 'ArrowRight': step(1, false); break;
        case 'ArrowLeft': step(-1, false); break;
        case 'ArrowDown': step(1, true); break;
        case 'ArrowUp': step(-1, true); break;
        case ' ': if (pvideo && !pvideo.hidden) { if (pvideo.paused) pvideo.play(); else pvideo.pause(); } break;
        case 'k': decide('keep'); break;
        case 'x': decide('reject'); break;
        case 'u': decide('clear'); break;
        case 'n': decide('note'); break;
        case 'Escape': close(); break;
        default: return;
      }
      e.preventDefault();
      return;
    }
    if (tag === 'BUTTON') return;
    var list = visible();
    if (!list.length) return;
    var i = selected ? list.indexOf(selected) : -1;
    var next = null;
    switch (e.key) {
      case 'ArrowRight': next = list[i < 0 ? 0 : Math.min(list.length - 1, i + 1)]; break;
      case 'ArrowLeft': next = list[i < 0 ? 0 : Math.max(0, i - 1)]; break;
      case 'ArrowDown': next = list[vertical(list, i, 1)]; break;
      case 'ArrowUp': next = list[vertical(list, i, -1)]; break;
      case ' ': case 'Enter': open(selected || list[0]); break;
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
    all('select', form).forEach(function (s) { before[s.getAttribute('data-filter') + '/' + (s.getAttribute('data-name') || '')] = s.value; });
    form.innerHTML = html;
    all('select', form).forEach(function (s) {
      var v = before[s.getAttribute('data-filter') + '/' + (s.getAttribute('data-name') || '')];
      if (v !== undefined) s.value = v;
    });
  }

  /** A prompt's row as the server has it now: replaced whole, or placed in the job's order. */
  function upsert(d) {
    if (!d.row) return;
    var added = fragment(d.row);
    var old = document.getElementById(d.rowId);
    var selectedId = selected && selected.id;
    if (old) {
      if (playing && old.contains(playing)) stop(playing);
      old.replaceWith(added);
    } else {
      var empty = document.getElementById('empty');
      if (empty) empty.remove();
      var index = Number(added.getAttribute('data-index'));
      var later = all('.group', grid).filter(function (g) { return Number(g.getAttribute('data-index')) > index; })[0];
      grid.insertBefore(added, later || null);
    }
    if (selectedId && selected && !selected.isConnected) {
      selected = null;
      var again = document.getElementById(selectedId);
      if (again) select(again, false);
    }
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
    events.addEventListener('pick', function (ev) { var d = JSON.parse(ev.data); setPick(d.key, d.file, d.verdict, d.note); });
  }

  readFilters();
  document.body.setAttribute('data-ready', '1');
})();
`;

/** The CSP source that allows exactly this script. */
export const PAGE_SCRIPT_HASH = `sha256-${createHash('sha256').update(PAGE_SCRIPT, 'utf8').digest('base64')}`;
