import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FollowEnd, type ScrollGeometry } from '../webview/followEnd';

const view = (top: number, height: number, viewHeight = 600, viewWidth = 400): ScrollGeometry => ({
  top,
  height,
  viewHeight,
  viewWidth,
});

test('the reader scrolling up stops following at once, even right after the panel stuck to the end', () => {
  const follow = new FollowEnd();
  follow.stuck(view(3400, 4000));
  assert.equal(follow.scrolled(view(0, 4000)), false);
  assert.equal(follow.following, false);
});

test('the reader scrolling up while "Jump to latest" came or went (the view 5 px taller or shorter) stops it', () => {
  const follow = new FollowEnd();
  follow.stuck(view(56735, 57417, 687));
  assert.equal(follow.scrolled(view(0, 57417, 682)), false);
});

test('entries getting their real height below the view (a scroll that layout caused) keep it following', () => {
  const follow = new FollowEnd();
  follow.stuck(view(3400, 4000));
  // the end moved away and the browser kept scrollTop (or moved it down): not the reader
  assert.equal(follow.scrolled(view(3489, 4647)), true);
});

test('the view resized, hidden or shown, is not the reader: it keeps following', () => {
  const follow = new FollowEnd();
  follow.stuck(view(4549, 5231, 682));
  // hidden: the view shrinks to a sliver and the text reflows; shown again: clamped back
  assert.equal(follow.scrolled(view(34586, 47365, 16, 40)), true);
  assert.equal(follow.scrolled(view(25649, 26336, 687)), true);
  assert.equal(follow.scrolled(view(15101, 15783, 682)), true);
});

test('back at the end, by any means, follows again', () => {
  const follow = new FollowEnd();
  follow.stuck(view(3400, 4000));
  follow.scrolled(view(1000, 4000));
  assert.equal(follow.following, false);
  assert.equal(follow.scrolled(view(3380, 4000)), true);
});

test('scrolled down but not to the end: still not following', () => {
  const follow = new FollowEnd();
  follow.stuck(view(3400, 4000));
  follow.scrolled(view(0, 4000));
  assert.equal(follow.scrolled(view(1500, 4000)), false);
});

test('a wheel turned up stops following before its scroll lands; a resize while not following keeps it off', () => {
  const follow = new FollowEnd();
  follow.stuck(view(3400, 4000));
  follow.readerWentUp();
  assert.equal(follow.following, false);
  follow.resized(view(3400, 4000, 500));
  assert.equal(follow.scrolled(view(3300, 4000, 500)), false);
});
