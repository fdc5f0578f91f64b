import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  detectParams,
  detectionReport,
  endpointReport,
  localModelItems,
  modelItems,
  needsSetup,
  servedChoice,
  shownModel,
} from '../src/setup/setup';

test('the welcome shows only when there is no key anywhere and no base URL', () => {
  assert.equal(needsSetup({ hasKey: false, envKey: false, baseUrl: '' }), true);
  assert.equal(needsSetup({ hasKey: true, envKey: false, baseUrl: '' }), false);
  assert.equal(needsSetup({ hasKey: false, envKey: true, baseUrl: '' }), false);
  assert.equal(needsSetup({ hasKey: false, envKey: false, baseUrl: 'http://127.0.0.1:11434/v1' }), false);
});

test('the shown model: the setting, else the session, else the server default', () => {
  assert.equal(shownModel(' qwen3 ', 'gpt-5'), 'qwen3');
  assert.equal(shownModel('', 'gpt-5'), 'gpt-5');
  assert.equal(shownModel('', undefined), 'default model');
});

test('a connection test says what is wrong, or what it found', () => {
  assert.deepEqual(
    endpointReport({ baseUrl: 'http://x/v1', preset: null, models: [], error: 'nothing is listening there' }),
    { ok: false, text: 'http://x/v1: nothing is listening there' },
  );
  const ok = endpointReport({ baseUrl: 'http://x/v1', preset: 'ollama', models: [{ id: 'a' }, { id: 'b' }] });
  assert.equal(ok.ok, true);
  assert.match(ok.text, /Connected to http:\/\/x\/v1 \(ollama\): 2 models \(a, b\)/);
});

test('the model picker: a typed name first, then the current model, then the rest by name', () => {
  const models = [{ id: 'zeta' }, { id: 'alpha', contextWindow: 32768 }, { id: 'gpt-5' }];
  assert.deepEqual(
    modelItems(models, 'gpt-5').map(i => [i.label, i.description]),
    [
      ['gpt-5', 'current'],
      ['alpha', '32k context'],
      ['zeta', undefined],
    ],
  );
  assert.deepEqual(
    modelItems(models, 'gpt-5', 'my-finetune').map(i => i.model),
    ['my-finetune', 'gpt-5', 'alpha', 'zeta'],
  );
  assert.deepEqual(
    modelItems(models, 'gpt-5', 'alpha').map(i => i.model),
    ['gpt-5', 'alpha', 'zeta'],
    'a listed name is not added twice',
  );
  assert.deepEqual(
    modelItems([], 'typed-before').map(i => i.label),
    ['typed-before'],
  );
});

test('local servers found are listed one row per model with the server and what it can do', () => {
  const found = {
    message: 'Found Ollama at http://127.0.0.1:11434/v1 (2 models).',
    endpoints: [
      {
        baseUrl: 'http://127.0.0.1:11434/v1',
        preset: 'ollama' as const,
        presetName: 'Ollama',
        models: [
          { id: 'gemma3:1b', contextWindow: 8192, nativeTools: false },
          { id: 'qwen2.5-coder:1.5b', contextWindow: 4096, nativeTools: true },
        ],
      },
    ],
  };
  assert.deepEqual(
    localModelItems(found).map(i => [i.label, i.description, i.baseUrl, i.model]),
    [
      [
        'gemma3:1b',
        'Ollama · 127.0.0.1:11434/v1 · 8k context · tools described in the prompt',
        'http://127.0.0.1:11434/v1',
        'gemma3:1b',
      ],
      [
        'qwen2.5-coder:1.5b',
        'Ollama · 127.0.0.1:11434/v1 · 4k context',
        'http://127.0.0.1:11434/v1',
        'qwen2.5-coder:1.5b',
      ],
    ],
  );
  assert.equal(detectionReport(found), undefined);
  assert.match(
    detectionReport({ message: 'No local model server answered. Tried Ollama (…).', endpoints: [] }) ?? '',
    /No local model server answered/,
  );
  assert.match(
    detectionReport({
      message: 'Found vLLM.',
      endpoints: [{ baseUrl: 'http://127.0.0.1:8000/v1', preset: 'vllm', models: [] }],
    }) ?? '',
    /load or pull one first/,
  );
});

test('shiro.localServerUrls replaces the presets only when it names a URL', () => {
  assert.deepEqual(detectParams([' http://10.0.0.5:11434/v1 ', '', 7]), { baseUrls: ['http://10.0.0.5:11434/v1'] });
  assert.deepEqual(detectParams([]), {});
  assert.deepEqual(detectParams(undefined), {});
});

test('after a connection test: the one served model is used, several unnamed are offered, a listed name kept', () => {
  assert.deepEqual(servedChoice(['qwen2.5-coder-1.5b-instruct'], ''), { use: 'qwen2.5-coder-1.5b-instruct' });
  assert.deepEqual(servedChoice(['qwen2.5-coder-1.5b-instruct'], 'gpt-5'), { use: 'qwen2.5-coder-1.5b-instruct' });
  assert.deepEqual(servedChoice(['a', 'b'], ''), { pick: ['a', 'b'] });
  assert.deepEqual(servedChoice(['a', 'b'], 'b'), { keep: true });
  assert.deepEqual(servedChoice(['a', 'b'], 'typed-by-hand'), { keep: true });
  assert.deepEqual(servedChoice([], 'x'), { keep: true });
});
