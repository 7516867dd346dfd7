// The task store and the render timeline. A task's state is a pure function of its creation time and
// the current time, so status checks cost a map lookup and some arithmetic, and every port sees the
// same task without any coordination.
import type { Dice } from './prng';

export type GeneralStatus = 'NOT_START' | 'SUBMITTED' | 'QUEUED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE';
export type VideosStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

export interface Task {
  id: string;
  protocol: 'general' | 'videos';
  model: string;
  prompt: string;
  seconds: number;
  /** WxH of the rendered video. */
  size: string;
  createdAt: number;
  renderMs: number;
  /** Set when this render is destined to fail. */
  failReason?: string;
  /** Extra request fields the gateway passes through (metadata, unknown form fields). */
  metadata?: Record<string, unknown>;
  /** The image an openai create sent as `input_reference`: drawn into the video's first second, as a general first_frame is. */
  firstFrame?: Buffer;
  /**
   * When a live read last wrote this task's state back to the gateway's store (new-api v0.10.0
   * reads a Gemini task from its upstream on every retrieve and saves what it read).
   */
  liveReadAt?: number;
}

export interface TaskView {
  status: GeneralStatus;
  /** 0..100 */
  progress: number;
  submitTime: number;
  startTime: number;
  finishTime: number;
}

// Share of the render spent in each waiting state before IN_PROGRESS: the real sequence is
// NOT_START -> SUBMITTED -> QUEUED -> IN_PROGRESS -> SUCCESS | FAILURE.
const NOT_START_END = 0.05;
const SUBMITTED_END = 0.1;
const QUEUED_END = 0.2;

export const FAIL_REASONS = [
  'The output video was flagged by the content safety system. Please modify the prompt and try again.',
  'upstream task failed: InputImageSensitiveContentDetected',
  'upstream generation timed out after 900s',
  'Internal error from upstream (code 500): render node lost',
];

const secs = (ms: number): number => Math.floor(ms / 1000);

export function viewAt(task: Task, now: number): TaskView {
  const R = task.renderMs;
  const elapsed = now - task.createdAt;
  const f = R <= 0 ? 1 : elapsed / R;
  const startMs = task.createdAt + R * QUEUED_END;
  const base = { submitTime: secs(task.createdAt), startTime: 0, finishTime: 0 };
  if (f >= 1) {
    const status = task.failReason ? 'FAILURE' : 'SUCCESS';
    return { ...base, status, progress: 100, startTime: secs(startMs), finishTime: secs(task.createdAt + R) };
  }
  if (f < NOT_START_END) return { ...base, status: 'NOT_START', progress: 0 };
  if (f < SUBMITTED_END) return { ...base, status: 'SUBMITTED', progress: 0 };
  if (f < QUEUED_END) return { ...base, status: 'QUEUED', progress: 0 };
  const p = Math.floor(((f - QUEUED_END) / (1 - QUEUED_END)) * 100);
  return { ...base, status: 'IN_PROGRESS', progress: Math.min(99, Math.max(1, p)), startTime: secs(startMs) };
}

export function videosStatus(s: GeneralStatus): VideosStatus {
  switch (s) {
    case 'SUCCESS':
      return 'completed';
    case 'FAILURE':
      return 'failed';
    case 'IN_PROGRESS':
      return 'in_progress';
    default:
      return 'queued';
  }
}

export class TaskStore {
  private readonly tasks = new Map<string, Task>();
  constructor(private readonly dice: Dice) {}

  get size(): number {
    return this.tasks.size;
  }

  get(id: string): Task | undefined {
    return this.tasks.get(id);
  }

  /** Ids look like the real gateway's (task_ + 32 alphanumerics) and replay for a given seed. */
  newId(): string {
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    let id = 'task_';
    for (let i = 0; i < 32; i++) id += alphabet[Math.floor(this.dice.next('task-id') * alphabet.length)];
    return this.tasks.has(id) ? this.newId() : id;
  }

  /** `id` is the profile's own form of id (LiteLLM's, new-api v0.10.0's upstream ids); default newId(). */
  create(fields: Omit<Task, 'id' | 'failReason'>, failRate: number | undefined, id?: string): Task {
    const task: Task = { ...fields, id: id !== undefined && !this.tasks.has(id) ? id : this.newId() };
    if (this.dice.chance('fail', failRate)) task.failReason = this.dice.pick('fail-reason', FAIL_REASONS);
    this.tasks.set(task.id, task);
    return task;
  }
}
