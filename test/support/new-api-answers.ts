// What new-api v0.10.0 answers, as its real build did in test/gateways/smoke.test.ts, for the
// simulator's new-api profile to be checked against the same figure (test/integration/sim).

/**
 * A Gemini (Veo) task read on the general route: relay/relay_task.go reads it live and answers
 * this shape, not the task record's.
 */
export function geminiTaskOnGeneralRoute(taskId: string, contentUrl: string): unknown {
  return {
    code: 'success',
    message: '',
    data: { error: null, format: 'mp4', metadata: null, status: 'succeeded', task_id: taskId, url: contentUrl },
  };
}
