// Every activity the worker registers; workflows proxy this module's types.
export { preparePlan, readPlanItems } from './plan';
export { enhancePrompt, createTask, createTaskMarked, checkTask } from './render';
export { downloadVideo } from './download';
export { recordItem } from './record';
export { itemWorkflowState } from './item-workflow';
export { snapshotManifest } from './manifest-snapshot';
export { askForPermit, permitHoldersRunning } from './limiter';
export { deliverEvent, notifySubscriptions } from './notify';
export { jobSpendUsd } from './job-spend';
export { assembleFilm } from './assemble';
