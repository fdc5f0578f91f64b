import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Lifecycle } from '../src/server/lifecycle';

/** A server whose start and stop take as long as the test says: records what ran, and whether two overlapped. */
class ScriptedServer {
  readonly log: string[] = [];
  clients = 0;
  running = 0;
  overlapped = false;
  private busy = false;
  private gates: (() => void)[] = [];
  failNextStart = false;

  /** Let the step that is waiting go on. */
  release(): void {
    this.gates.shift()?.();
  }

  private async step(name: string, work: () => void): Promise<void> {
    if (this.busy) this.overlapped = true;
    this.busy = true;
    this.log.push(`${name} begins`);
    await new Promise<void>(resolve => this.gates.push(resolve));
    this.busy = false;
    work();
    this.log.push(`${name} ends`);
  }

  readonly steps = {
    start: () =>
      this.step('start', () => {
        if (this.failNextStart) {
          this.failNextStart = false;
          throw new Error('no interpreter');
        }
        this.clients++;
        this.running++;
      }),
    stop: () =>
      this.step('stop', () => {
        this.running = Math.max(0, this.running - 1);
      }),
  };
}

const tick = (): Promise<void> => new Promise(resolve => setImmediate(resolve));

/** Release every step as it comes, until `done` settles. */
async function drive(server: ScriptedServer, done: Promise<unknown>): Promise<void> {
  let settled = false;
  void done.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  while (!settled) {
    await tick();
    server.release();
  }
}

test('two restarts asked at once make one server, never two starts side by side', async () => {
  const server = new ScriptedServer();
  const life = new Lifecycle(server.steps);
  const first = life.restart();
  const second = life.restart(); // the trust grant and the settings change, in the same moment
  assert.equal(first, second, 'the second request joins the first, which has not begun');
  await drive(server, Promise.all([first, second]));
  assert.deepEqual(server.log, ['stop begins', 'stop ends', 'start begins', 'start ends']);
  assert.equal(server.running, 1);
  assert.ok(!server.overlapped);
});

test('a restart asked while one runs waits for it, then stops what it started; more requests join it', async () => {
  const server = new ScriptedServer();
  const life = new Lifecycle(server.steps);
  const first = life.restart();
  await tick();
  server.release(); // the first stop ends
  await tick(); // the first start has begun and waits
  assert.equal(server.log.at(-1), 'start begins');
  const second = life.restart();
  const third = life.restart(); // "Restart server" pressed twice more
  assert.notEqual(first, second, 'newer settings may have come: a start already under way is not enough');
  assert.equal(second, third);
  await drive(server, Promise.all([first, second, third]));
  assert.deepEqual(server.log, [
    'stop begins',
    'stop ends',
    'start begins',
    'start ends',
    'stop begins',
    'stop ends',
    'start begins',
    'start ends',
  ]);
  assert.equal(server.clients, 2);
  assert.equal(server.running, 1, 'the first server was stopped, not orphaned');
  assert.ok(!server.overlapped);
});

test('a stop while a start runs stops the server that start made', async () => {
  const server = new ScriptedServer();
  const life = new Lifecycle(server.steps);
  const started = life.restart();
  const stopped = life.stop();
  await drive(server, Promise.all([started, stopped]));
  assert.deepEqual(server.log.slice(-2), ['stop begins', 'stop ends']);
  assert.equal(server.running, 0);
});

test('a restart asked after a stop is not satisfied by a start queued before it', async () => {
  const server = new ScriptedServer();
  const life = new Lifecycle(server.steps);
  const a = life.restart();
  const stopped = life.stop();
  const c = life.restart();
  assert.notEqual(a, c);
  await drive(server, Promise.all([a, stopped, c]));
  assert.equal(server.running, 1, 'the last word was a start');
});

test('dispose stops the server even while a start runs, and no start comes after it', async () => {
  const server = new ScriptedServer();
  const life = new Lifecycle(server.steps);
  const running = life.restart();
  await tick();
  server.release();
  await tick(); // the start has begun
  const queued = life.restart(); // queued behind it, not begun
  const disposed = life.dispose();
  const late = life.restart();
  await drive(server, Promise.all([running, queued, disposed, late]));
  assert.equal(server.running, 0);
  assert.equal(server.clients, 1, 'the queued restart was dropped and the late one refused');
  assert.deepEqual(server.log.slice(-2), ['stop begins', 'stop ends']);
});

test('a start that fails does not hold up the queue', async () => {
  const server = new ScriptedServer();
  const life = new Lifecycle(server.steps);
  server.failNextStart = true;
  const failed = life.restart();
  const again = life.restart();
  assert.equal(failed, again);
  await drive(
    server,
    failed.catch(() => undefined),
  );
  await assert.rejects(failed, /no interpreter/);
  const retried = life.restart();
  await drive(server, retried);
  assert.equal(server.running, 1);
  await life.settled();
});
