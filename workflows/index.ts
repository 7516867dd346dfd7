// The workflow bundle's entry: every workflow type the worker registers.
export { JobWorkflow } from './job';
export { RenderWorkflow } from './render';
export { LimiterWorkflow } from './limiter';
export { RewriteWorkflow } from './rewrite';
export { NotifyWorkflow } from './notify';
