// Gateway and job-file text made inert for terminals and spreadsheets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { csvCell, displayWidth, fitWidth, padToWidth, plainText, terminalText } from '../../../client/terminal-text';

describe('terminal text', () => {
  it('plainText removes escape sequences, C0/C1 controls and bidi overrides, and keeps one line', () => {
    assert.equal(plainText('a\u001b[31mred\u001b[0m b'), 'ared b');
    assert.equal(plainText('title\u001b]0;pwned\u0007 x'), 'title x');
    assert.equal(plainText('osc8 \u001b]8;;http://x\u001b\\link\u001b]8;;\u001b\\'), 'osc8 link');
    assert.equal(plainText('up\u001b[1A\u001b[2Kgone'), 'upgone');
    assert.equal(plainText('c1\u009b31m and \u0085'), 'c131m and ');
    assert.equal(plainText('rtl \u202eexe.gpj'), 'rtl exe.gpj');
    assert.equal(plainText('two\nlines\tand\rcr\u0000'), 'two lines andcr');
  });

  it('terminalText keeps colour codes and line breaks only', () => {
    assert.equal(terminalText('\u001b[32mok\u001b[0m\nnext'), '\u001b[32mok\u001b[0m\nnext');
    assert.equal(terminalText('x\u001b[2J\u001b[H\u001b]0;t\u0007y'), 'xy');
  });

  it('measures and cuts by terminal columns, wide characters counting two', () => {
    assert.equal(displayWidth('abc'), 3);
    assert.equal(displayWidth('日本語'), 6);
    assert.equal(displayWidth('\u001b[31mab\u001b[0m'), 2);
    assert.equal(displayWidth('e\u0301'), 1);
    assert.equal(fitWidth('abcdef', 4), 'abc…');
    assert.equal(fitWidth('日本語テキスト', 7), '日本語…');
    assert.equal(displayWidth(fitWidth('日本語テキスト', 7)), 7);
    assert.equal(fitWidth('short', 10), 'short');
    assert.equal(padToWidth('日本', 6), '日本  ');
  });

  it('csvCell neutralises formula-leading cells (OWASP) and quotes per RFC 4180', () => {
    assert.equal(csvCell('=1+2'), "'=1+2");
    assert.equal(csvCell('+cmd|x'), "'+cmd|x");
    assert.equal(csvCell('-2+3'), "'-2+3");
    assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
    assert.equal(csvCell('\t=1'), "' =1");
    assert.equal(csvCell('  =1'), "'  =1");
    assert.equal(csvCell('=HYPERLINK("x","y")'), `"'=HYPERLINK(""x"",""y"")"`);
    assert.equal(csvCell('plain, with comma'), '"plain, with comma"');
    assert.equal(csvCell('a-b'), 'a-b');
    assert.equal(csvCell('1024'), '1024');
  });
});
