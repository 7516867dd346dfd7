// "This task does not exist" is read by one recognizer (gateway/dialects), so the retry engine's
// classification and the doctor's route probe agree on every answer the gateways give for it.
// Each body below is one a gateway gives (test/gateways/OBSERVED.md, the simulator) for a task it
// does not know; the engine must read it as a missing task, the doctor as a served route.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { readRoute } from '../../../client/doctor/routes';
import { classifyGatewayError, TaskNotFoundError } from '../../../gateway';

const UNKNOWN_TASK_BODIES: Record<string, unknown> = {
  'new-api v0.10.0 and the simulator': { code: 'task_not_exist', message: 'task_not_exist', data: null },
  'the simulator on /v1/videos/{id}': { error: { message: 'Task not found', type: 'invalid_request_error', code: 'task_not_found' } },
  "LiteLLM's wrapped upstream answer": {
    error: {
      message:
        'litellm.BadRequestError: OpenAIException - {"error":{"message":"Video not found","code":"not_found"}}\n\n' +
        "LiteLLM: model group 'veo-3.1-fast-generate-001' failed with the error above. No fallback was attempted.",
      type: 'invalid_request_error',
      code: '404',
    },
  },
  'an upstream saying the generation does not exist': { error: { message: 'The generation abc does not exist', code: 'not_found' } },
  'a bare video object error': { error: { message: 'video not found' } },
};

describe('one recognizer for "task not found"', () => {
  for (const [source, body] of Object.entries(UNKNOWN_TASK_BODIES)) {
    const text = JSON.stringify(body);
    it(`${source}: the engine reads a missing task, the doctor a served route`, () => {
      const error = classifyGatewayError({ status: 400, body: text, operation: 'retrieve', taskId: 't1' });
      assert.ok(error instanceof TaskNotFoundError, `classify: ${error.name}: ${error.message}`);
      assert.equal(readRoute('general', { status: 404, text, headers: {} }, true).verdict, 'serves', 'doctor');
    });
  }

  it("a create's 400 about a missing reference video is about the request, not a task", () => {
    const text = JSON.stringify({ error: { message: 'the reference video was not found', type: 'invalid_request_error' } });
    const error = classifyGatewayError({ status: 400, body: text, operation: 'create', model: 'm' });
    assert.equal(error.name, 'InvalidRequestError', error.message);
  });

  it('a plain 404 of a missing route is neither', () => {
    const text = JSON.stringify({ detail: 'Not Found' });
    assert.equal(readRoute('openai', { status: 404, text, headers: {} }, true).verdict, 'missing');
    assert.ok(!(classifyGatewayError({ status: 400, body: text, operation: 'retrieve' }) instanceof TaskNotFoundError));
  });
});
