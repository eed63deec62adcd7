// Settings table entries: How a worker runs Blender: its slots, builds, sandbox, render mode and timeouts.
// service/settings/table.ts puts the groups together in SETTING_GROUPS order.
import { BOTH, type Setting } from '../setting.js';

export const RENDER_SLOT_SETTINGS: readonly Setting[] = [
  {
    key: 'workers',
    flag: '--workers <n>',
    kind: { type: 'workers' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'auto',
    help:
      'render slots: auto (one per NVIDIA GPU, else one CPU slot), N CPU slots, or 0 for none in this process ' +
      '(service)',
  },
  {
    key: 'blenderPaths',
    flag: '--blender <path>',
    env: 'RENDERBRIDGE_BLENDER_PATHS',
    kind: { type: 'list', paths: true },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'none',
    help:
      'extra Blender builds (repeatable; the variable comma-separated): an executable, an unpacked release ' +
      'folder or a system root; RENDERBRIDGE_BLENDER_X_Y and PATH are searched too',
  },
  {
    key: 'sandbox',
    flag: '--no-sandbox',
    env: 'RENDERBRIDGE_SANDBOX',
    kind: { type: 'bool' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'on',
    help:
      'run Blender in a bubblewrap sandbox (no network, only the job folder writable, no farm secrets); off: a ' +
      'warning at start, shown by doctor and the workers page. A worker refuses to start when the sandbox does ' +
      'not work',
  },
  {
    key: 'renderNice',
    flag: '--render-nice <n>',
    env: 'RENDERBRIDGE_RENDER_NICE',
    kind: { type: 'int', min: 0, max: 19 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '10',
    help:
      'CPU niceness added to every Blender the worker starts, so the service and the worker keep answering ' +
      'while renders take every core; 0: the same priority as the service',
  },
  {
    key: 'bundledAddons',
    flag: '--bundled-addons <policy>',
    env: 'RENDERBRIDGE_BUNDLED_ADDONS',
    kind: { type: 'choice', values: ['auto', 'sandboxed', 'off'] },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'auto',
    help:
      "add-ons a project bundles: sandboxed: enabled in the job's sandboxed Blender; off: never enabled " +
      '(validation warns ADDON_REFUSED); auto: sandboxed when the sandbox is on, else off',
  },
  {
    key: 'blenderFromPath',
    flag: '--no-blender-from-path',
    env: 'RENDERBRIDGE_BLENDER_FROM_PATH',
    kind: { type: 'bool' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'on',
    help:
      'the `blender` found in PATH as a build; off: only --blender and RENDERBRIDGE_BLENDER_X_Y builds (a ' +
      'worker dedicated to other versions)',
  },
  {
    key: 'renderMode',
    flag: '--render-mode <mode>',
    kind: { type: 'choice', values: ['warm', 'chunked'] },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'warm',
    help:
      'warm: one Blender per slot and job keeps the scene loaded and renders the frames it claims; chunked: ' +
      'one Blender per chunk of frames',
  },
  {
    key: 'warmIdleSeconds',
    flag: '--warm-idle <seconds>',
    kind: { type: 'duration', unit: 's', min: 0 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '60',
    help: 'how long a warm Blender with no frame to render waits for more of its job before it is ended',
  },
  {
    key: 'warmMinFreeMemoryBytes',
    flag: '--warm-min-free-memory <size>',
    kind: { type: 'bytes', min: 0 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '1GiB',
    help: 'idle warm Blenders are ended while the memory available (MemAvailable) is below this',
  },
  {
    key: 'estimateWarmKeepSeconds',
    flag: '--estimate-warm-keep <seconds>',
    kind: { type: 'duration', unit: 's', min: 0 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '120',
    help:
      "warm mode: how long the Blender that rendered an estimate's sample frames waits for the job's render, " +
      'which renders its first frames in it instead of loading the scene again; ended at once when the job is ' +
      'canceled, memory runs short or another job needs the slot; 0: it ends with the estimate',
  },
  {
    key: 'preemptPriorityGap',
    flag: '--preempt-priority-gap <n>',
    kind: { type: 'int', min: 0, max: 100 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '0 (off)',
    help:
      'warm mode: a slot rendering a job stops at its next frame boundary, keeps the frames done and hands the ' +
      "rest of its task back, when a task waiting for a slot has a priority at least this much above the job's; " +
      '0: running frames always finish (chunked mode never preempts)',
  },
  {
    key: 'slotMemoryBytes',
    flag: '--slot-memory <size>',
    env: 'RENDERBRIDGE_SLOT_MEMORY',
    kind: { type: 'bytes', min: 64 * 2 ** 20 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: "the machine's memory",
    help:
      "memory each CPU render slot may use (e.g. 16GiB); each slot's Blender gets a memory cgroup of that size " +
      'where the worker may make one (root), and placement sends it only frames that fit',
  },
  {
    key: 'workerTags',
    flag: '--tag <tag>',
    env: 'RENDERBRIDGE_WORKER_TAGS',
    kind: { type: 'list' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'none',
    help:
      "this worker's tags (repeatable; the variable comma-separated), e.g. gpu:a4000, site:paris: a render " +
      'requiring tags (scheduling.requiredTags) runs only on workers with all of them',
  },
  {
    key: 'chunkFrames',
    flag: '--chunk-frames <n>',
    kind: { type: 'int', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'warm 8, chunked 8-50 by slots',
    help:
      'most frames per render task when this process plans a render (warm: shrinking to 1 at the end of a job; ' +
      'a large farm sets 1-2)',
  },
  {
    key: 'leaseSeconds',
    flag: '--lease-seconds <seconds>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '30',
    help: 'how soon the tasks of a worker that died go back to the queue',
  },
  {
    key: 'analysisTimeoutSeconds',
    flag: '--analysis-timeout <duration>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '5m',
    help: "limit for one validation's Blender run",
  },
  {
    key: 'chunkTimeoutSeconds',
    flag: '--chunk-timeout <duration>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '6h',
    help: "limit for one render chunk's Blender run; warm: for a scene load and for each frame",
  },
  {
    key: 'chunkIdleTimeoutSeconds',
    flag: '--chunk-idle-timeout <duration>',
    kind: { type: 'duration', unit: 's', min: 1 },
    group: 'Render slots',
    commands: BOTH,
    defaultText: '15m',
    help: 'a chunk (warm: a load or a frame) whose Blender prints nothing this long is taken as hung',
  },
  {
    key: 'ffmpeg',
    flag: '--ffmpeg <path>',
    kind: { type: 'path' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'ffmpeg on PATH',
    help: 'ffmpeg executable for videos',
  },
  {
    key: 'ffprobe',
    flag: '--ffprobe <path>',
    kind: { type: 'path' },
    group: 'Render slots',
    commands: BOTH,
    defaultText: 'ffprobe on PATH',
    help: 'ffprobe executable',
  },
];
