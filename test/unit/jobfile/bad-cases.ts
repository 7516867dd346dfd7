// Malformed job files, one per rule, each with the exact errors expected (line:column: message).
import { HEAD } from './helpers';

export interface BadCase {
  rule: string;
  yaml: string;
  files?: Record<string, string>;
  errors: string[];
}

const G = `name: t
gateway:
  base_urls: [http://127.0.0.1:8787]
`;

export const BAD_CASES: BadCase[] = [
  {
    rule: 'unknown key with a suggestion',
    yaml: `${HEAD}items:\n  - promt: hi\n`,
    errors: ["7:5: items[0].promt: unknown key 'promt', did you mean 'prompt'?"],
  },
  {
    rule: 'unknown top-level key',
    yaml: `${HEAD}itmes:\n  - prompt: hi\n`,
    errors: ["6:1: unknown key 'itmes', did you mean 'items'?"],
  },
  {
    rule: 'unknown key without a close match',
    yaml: `${HEAD}  colour: red\nitems:\n  - prompt: hi\n`,
    errors: [
      "6:3: defaults.colour: unknown key 'colour' in defaults; allowed keys: model, protocol, seconds, resolution, ratio, size, generate_audio, watermark, variants, seed, references",
    ],
  },
  {
    rule: 'api_key in the gateway section',
    yaml: `name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\n  api_key: abc\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n`,
    errors: [
      "4:3: unknown key 'api_key' in gateway; allowed keys: base_urls, api_key_env, request_timeout, allow_private_targets (never put a key in a job file: use gateway.api_key_env)",
    ],
  },
  {
    rule: 'seconds not digits',
    yaml: `${HEAD}items:\n  - prompt: hi\n    seconds: five\n`,
    errors: ['8:14: items[0].seconds must be a string of digits such as "5", got "five"'],
  },
  {
    rule: 'seconds negative number',
    yaml: `${HEAD}items:\n  - prompt: hi\n    seconds: -3\n`,
    errors: ['8:14: items[0].seconds must be a string of digits such as "5", got "-3"'],
  },
  {
    rule: 'seconds a boolean',
    yaml: `${HEAD}  seconds: true\nitems:\n  - prompt: hi\n`,
    errors: ['6:12: defaults.seconds must be a string of digits such as "5", got true'],
  },
  {
    rule: 'duration without unit',
    yaml: `${HEAD}polling:\n  initial: 10\nitems:\n  - prompt: hi\n`,
    errors: ['7:12: polling.initial must be a duration such as "500ms", "10s", "5m" or "2h", got 10'],
  },
  {
    rule: 'duration with unknown unit',
    yaml: `${HEAD}polling:\n  timeout: 2d\nitems:\n  - prompt: hi\n`,
    errors: ['7:12: polling.timeout must be a duration such as "500ms", "10s", "5m" or "2h", got "2d"'],
  },
  {
    rule: 'polling max below initial',
    yaml: `${HEAD}polling:\n  initial: 30s\n  max: 5s\nitems:\n  - prompt: hi\n`,
    errors: ['8:8: polling.max (5s) must be at least initial (30s)'],
  },
  {
    rule: 'resolution format',
    yaml: `${HEAD}  resolution: 720\nitems:\n  - prompt: hi\n`,
    errors: ['6:15: defaults.resolution must be a resolution such as "720p", got 720'],
  },
  {
    rule: 'ratio format',
    yaml: `${HEAD}items:\n  - prompt: hi\n    ratio: wide\n`,
    errors: ['8:12: items[0].ratio must be an aspect ratio such as "16:9" (quote it in YAML), got "wide"'],
  },
  {
    rule: 'size format',
    yaml: `${HEAD}items:\n  - prompt: hi\n    model: veo-3.1-fast-generate-001\n    protocol: openai\n    size: 1280*720\n`,
    errors: ['10:11: items[0].size must be a size such as "1280x720", got "1280*720"'],
  },
  {
    rule: 'name pattern',
    yaml: `name: Spring_Campaign\ngateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n`,
    errors: ['1:7: name must be a name of a-z, 0-9 and -, starting with a letter or digit, at most 63 long, got "Spring_Campaign"'],
  },
  {
    rule: 'id pattern',
    yaml: `${HEAD}items:\n  - id: hero shot\n    prompt: hi\n`,
    errors: ['7:9: items[0].id must be 1 to 64 of A-Z a-z 0-9 . _ -, got "hero shot"'],
  },
  {
    rule: 'protocol enum with suggestion',
    yaml: `${HEAD}  protocol: opnai\nitems:\n  - prompt: hi\n`,
    errors: ['6:13: defaults.protocol must be one of general, openai, got "opnai"; did you mean "openai"?'],
  },
  {
    rule: 'boolean as yes',
    yaml: `${HEAD}  watermark: yes\nitems:\n  - prompt: hi\n`,
    errors: ['6:14: defaults.watermark must be true or false, got "yes"'],
  },
  {
    rule: 'missing required name',
    yaml: `gateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n`,
    errors: ["1:1: the job file is missing required key 'name'"],
  },
  {
    rule: 'missing required prompt',
    yaml: `${HEAD}items:\n  - id: a\n    seconds: "5"\n`,
    errors: ["7:5: items[0].prompt: items[0] is missing required key 'prompt'"],
  },
  {
    rule: 'missing gateway base_urls',
    yaml: `name: t\ngateway:\n  api_key_env: GW_KEY\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n`,
    errors: ["3:3: gateway.base_urls: gateway is missing required key 'base_urls'"],
  },
  {
    rule: 'empty value counts as given: prompt with nothing',
    yaml: `${HEAD}items:\n  - prompt:\n`,
    errors: ['7:5: items[0].prompt must be text, got nothing'],
  },
  {
    rule: 'base url not http',
    yaml: `name: t\ngateway:\n  base_urls:\n    - ftp://gw.example.com\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n`,
    errors: [
      '4:7: gateway.base_urls[0]: base address "ftp://gw.example.com" uses ftp, not http or https; use an http(s) URL such as "https://gw.example.com"',
    ],
  },
  {
    rule: 'base url with credentials',
    yaml: `name: t\ngateway:\n  base_urls:\n    - https://user:pw@gw.example.com\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n`,
    errors: [
      '4:7: gateway.base_urls[0]: base address with user:password contains credentials: never put them in a job file; the key goes in the environment',
    ],
  },
  {
    rule: 'base url listed twice after normalising',
    yaml: `name: t\ngateway:\n  base_urls:\n    - https://gw.example.com\n    - https://gw.example.com/v1/\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n`,
    errors: ['5:7: gateway.base_urls[1]: base address "https://gw.example.com" is listed twice'],
  },
  {
    rule: 'key-looking api_key_env',
    yaml: `name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\n  api_key_env: sk-live-0123456789abcdef\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n`,
    errors: [
      '4:16: gateway.api_key_env looks like an API key: never put the key in a job file; put it in the environment (export GATEWAY_API_KEY=...) and write the variable name here',
    ],
  },
  {
    rule: 'api_key_env not a variable name',
    yaml: `name: t\ngateway:\n  base_urls: [http://127.0.0.1:8787]\n  api_key_env: my key\ndefaults:\n  model: m\nitems:\n  - prompt: hi\n`,
    errors: ['4:16: gateway.api_key_env must be the name of an environment variable such as "GATEWAY_API_KEY", got "my key"'],
  },
  {
    rule: 'a key pasted into a prompt',
    yaml: `${HEAD}items:\n  - prompt: use sk-abcdefghijklmnopqrstuvwx please\n`,
    errors: [
      '7:13: items[0].prompt: this looks like an API key: never put a key in a job file; put it in the environment variable named by gateway.api_key_env',
    ],
  },
  {
    rule: 'reference with two kinds',
    yaml: `${HEAD}items:\n  - prompt: hi\n    references:\n      - image: https://x.example/a.png\n        video: https://x.example/a.mp4\n`,
    errors: [
      '9:9: items[0].references[0]: a reference takes exactly one of image, video or audio, got image and video; use one entry per asset',
    ],
  },
  {
    rule: 'reference with no kind',
    yaml: `${HEAD}items:\n  - prompt: hi\n    references:\n      - role: reference_image\n`,
    errors: ['9:9: items[0].references[0]: a reference needs one of image, video or audio'],
  },
  {
    rule: 'role does not match kind',
    yaml: `${HEAD}items:\n  - prompt: hi\n    references:\n      - audio: https://x.example/a.mp3\n        role: reference_image\n`,
    errors: ['10:15: items[0].references[0].role of an audio reference must be reference_audio, got "reference_image"'],
  },
  {
    rule: 'reference with another scheme',
    yaml: `${HEAD}items:\n  - prompt: hi\n    references:\n      - image: ftp://x.example/a.png\n`,
    errors: ['9:16: items[0].references[0].image must be an http(s) URL, a data: URL or a local path, got "ftp://x.example/a.png"'],
  },
  {
    rule: 'kind the model does not accept',
    yaml: `${HEAD}models:\n  seedance-1-0-pro-250528:\n    assets: [image]\nitems:\n  - prompt: hi\n    references:\n      - video: https://x.example/a.mp4\n`,
    errors: [
      '12:16: items[0].references[0].video: model seedance-1-0-pro-250528 does not accept video references (models.seedance-1-0-pro-250528.assets: image)',
    ],
  },
  {
    rule: 'openai protocol with a video reference',
    yaml: `${HEAD}models:\n  veo-3.1-fast-generate-001:\n    protocol: openai\nitems:\n  - prompt: hi\n    model: veo-3.1-fast-generate-001\n    references:\n      - video: https://x.example/a.mp4\n`,
    errors: ['13:16: items[0].references[0].video: the openai protocol takes only image references (sent as input_reference), got video'],
  },
  {
    rule: 'local reference file missing',
    yaml: `${HEAD}items:\n  - prompt: hi\n    references:\n      - image: ./assets/missing.png\n`,
    errors: [
      '9:16: items[0].references[0].image file "./assets/missing.png" does not exist (looked for ${DIR}/assets/missing.png, relative to the job file)',
    ],
  },
  {
    rule: 'size on a general item',
    yaml: `${HEAD}items:\n  - prompt: hi\n    size: 1280x720\n`,
    errors: [
      '8:11: items[0].size applies only to the openai protocol, but this item uses the general protocol; the general protocol takes resolution and ratio',
    ],
  },
  {
    rule: 'ratio on an openai model',
    yaml: `${HEAD}models:\n  veo-3.1-fast-generate-001:\n    protocol: openai\n    ratio: "16:9"\nitems:\n  - prompt: hi\n    model: veo-3.1-fast-generate-001\n`,
    errors: [
      '9:12: models.veo-3.1-fast-generate-001.ratio applies only to the general protocol, but model veo-3.1-fast-generate-001 uses the openai protocol; the openai protocol takes size such as "1280x720"',
    ],
  },
  {
    rule: 'ratio on an item with the openai protocol',
    yaml: `${HEAD}items:\n  - prompt: hi\n    protocol: openai\n    ratio: "16:9"\n`,
    errors: [
      '9:12: items[0].ratio applies only to the general protocol, but this item uses the openai protocol; the openai protocol takes size such as "1280x720"',
    ],
  },
  {
    rule: 'unknown placeholder with suggestion',
    yaml: `${HEAD}vars:\n  product: shoe\nitems:\n  - prompt: a {prodcut} on a street\n`,
    errors: ['9:13: items[0].prompt: unknown placeholder {prodcut} in prompt; did you mean {product}?'],
  },
  {
    rule: 'unknown placeholder in output name',
    yaml: `${HEAD}items:\n  - prompt: hi\noutput:\n  name: "{index}-{title}"\n`,
    errors: ['9:9: unknown placeholder {title} in output.name; known: {job}, {date}, {index}, {model}, {id}, {take}'],
  },
  {
    rule: 'item placeholder in output dir',
    yaml: `${HEAD}items:\n  - prompt: hi\noutput:\n  dir: ./out/{index}\n`,
    errors: [
      '9:8: placeholder {index} cannot be used in output.dir: {index} differs between items; only {job}, {date} and vars keys are known here',
    ],
  },
  {
    rule: '{id} in a prompt of an item without id',
    yaml: `${HEAD}items:\n  - prompt: shot {id}\n`,
    errors: [
      '7:13: items[0].prompt: placeholder {id} cannot be used in prompt: this item has no id, and its key is a hash of its prompt; give it an id',
    ],
  },
  {
    rule: 'bad placeholder format',
    yaml: `${HEAD}items:\n  - prompt: hi\noutput:\n  name: "{index:x3}"\n`,
    errors: ['9:9: placeholder {index:x3} in output.name has an unknown format; use a zero-padded width such as {index:03}'],
  },
  {
    rule: 'reserved vars key',
    yaml: `${HEAD}vars:\n  date: tomorrow\nitems:\n  - prompt: hi\n`,
    errors: ["7:3: vars.date: vars key 'date' is reserved: {date} is built in; rename it"],
  },
  {
    rule: 'duplicate ids',
    yaml: `${HEAD}items:\n  - id: a\n    prompt: one\n  - id: a\n    prompt: two\n`,
    errors: ['9:9: items[1].id: duplicate id "a": items[0] (line 7) has it too'],
  },
  {
    rule: 'identical items without ids',
    yaml: `${HEAD}items:\n  - prompt: same\n  - prompt: same\n`,
    errors: [
      '8:5: items[1] renders exactly the same request as items[0] (line 7) (same model, prompt, parameters and references); remove one or give each an id',
    ],
  },
  {
    rule: 'two items writing the same output',
    yaml: `${HEAD}items:\n  - id: a\n    prompt: one\n  - id: b\n    prompt: two\noutput:\n  name: clip\n`,
    errors: ['9:5: items[1] would write the same output "clip" as items[0] (line 7); make output.name unique, e.g. with {index} or {id}'],
  },
  {
    rule: 'output name escaping with ..',
    yaml: `${HEAD}items:\n  - prompt: hi\noutput:\n  name: ../{id}\n`,
    errors: ['9:9: output.name: output name "../{id}" contains ".." and would escape the output directory'],
  },
  {
    rule: 'absolute output name',
    yaml: `${HEAD}items:\n  - prompt: hi\noutput:\n  name: /tmp/{id}\n`,
    errors: ['9:9: output.name: output name "/tmp/{id}" is an absolute path'],
  },
  {
    rule: 'control character in output name from vars',
    yaml: `${HEAD}vars:\n  tag: "a\\u0001b"\nitems:\n  - prompt: hi\noutput:\n  name: "{index}-{tag}"\n`,
    errors: ['9:5: output name "1-a\\u0001b" of items[0] contains a control character'],
  },
  {
    rule: 'output name escaping through a var',
    yaml: `${HEAD}vars:\n  up: ".."\nitems:\n  - prompt: hi\noutput:\n  name: "{up}/{index}"\n`,
    errors: ['9:5: output name "../1" of items[0] contains ".." and would escape the output directory'],
  },
  {
    rule: 'no model anywhere',
    yaml: `${G}items:\n  - prompt: hi\n`,
    errors: ['5:5: items[0] has no model: set model on the item or in defaults'],
  },
  {
    rule: 'no items at all',
    yaml: `${HEAD}items: []\n`,
    errors: ['6:8: the job has no items: add entries to items, or rows with items_from'],
  },
  {
    rule: 'items_from file missing',
    yaml: `${HEAD}items_from:\n  file: nope.csv\n`,
    errors: ['7:9: items_from.file: items_from file "nope.csv" cannot be read: no such file (looked for ${DIR}/nope.csv)'],
  },
  {
    rule: 'items_from unknown extension',
    yaml: `${HEAD}items_from:\n  file: prompts.xlsx\n`,
    files: { 'prompts.xlsx': 'x' },
    errors: ['7:9: items_from.file: cannot tell the format of "prompts.xlsx": use a .csv, .jsonl or .txt file, or set items_from.format'],
  },
  {
    rule: 'items_from csv row with wrong field count',
    yaml: `${HEAD}items_from:\n  file: p.csv\n`,
    files: { 'p.csv': 'id,prompt\na,one\nb,two,extra\n' },
    errors: ['p.csv:3:1: row has 3 fields, the header has 2'],
  },
  {
    rule: 'items_from csv unclosed quote',
    yaml: `${HEAD}items_from:\n  file: p.csv\n`,
    files: { 'p.csv': 'id,prompt\na,"one\n' },
    errors: ['p.csv:2:3: a quoted field is not closed: add the closing "'],
  },
  {
    rule: 'items_from csv bad seconds cell',
    yaml: `${HEAD}items_from:\n  file: p.csv\n`,
    files: { 'p.csv': 'id,prompt,seconds\na,one,5\nb,two,ten\n' },
    errors: ['p.csv:3:7: seconds must be a string of digits such as "5", got "ten"'],
  },
  {
    // The misspelt header is the one problem: its rows are read as the key it means, so neither a
    // "missing prompt" per row nor an "unused column" for a placeholder the prompt uses follows.
    rule: 'items_from csv without prompt column',
    yaml: `${HEAD}items_from:\n  file: p.csv\n`,
    files: { 'p.csv': 'id,promt,product\na,an ad for {product},a shoe\nb,an ad for {product},a hat\n' },
    errors: [
      'p.csv:1:4: column "promt" is not an item key, and no prompt, reference or output.name uses it as {promt}; did you mean "prompt"?',
    ],
  },
  {
    // The prompt misspells the column: the error is at the prompt, naming the column, and the
    // column is not called a typo of the misspelling.
    rule: 'items_from csv prompt misspells a column',
    yaml: `${HEAD}items_from:\n  file: p.csv\n`,
    files: { 'p.csv': 'id,prompt,product\na,an ad for {prodcut},a shoe\n' },
    errors: ['p.csv:2:3: unknown placeholder {prodcut} in prompt; did you mean {product}?'],
  },
  {
    rule: 'items_from jsonl invalid line',
    yaml: `${HEAD}items_from:\n  file: p.jsonl\n`,
    files: { 'p.jsonl': '{"prompt": "one"}\n{"prompt": "two"\n' },
    errors: ["p.jsonl:2:17: not valid JSON: Expected ',' or '}' after property value"],
  },
  {
    rule: 'items_from jsonl unknown-typed value',
    yaml: `${HEAD}items_from:\n  file: p.jsonl\n`,
    files: { 'p.jsonl': '{"prompt": "one", "seconds": [5]}\n' },
    errors: ['p.jsonl:1:19: seconds must be a string of digits such as "5", got a list'],
  },
  {
    rule: 'items_from empty txt',
    yaml: `${HEAD}items_from:\n  file: p.txt\n`,
    files: { 'p.txt': '\n\n' },
    errors: ['7:9: items_from.file: items_from file "p.txt" has no rows'],
  },
  {
    rule: 'cron with a field out of range',
    yaml: `${HEAD}items:\n  - prompt: hi\nschedule:\n  cron: "0 24 * * *"\n`,
    errors: ['9:9: schedule.cron hour 24 is out of range 0-23'],
  },
  {
    rule: 'cron with 4 fields',
    yaml: `${HEAD}items:\n  - prompt: hi\nschedule:\n  cron: "0 3 * *"\n`,
    errors: [
      '9:9: schedule.cron needs 5 fields (minute hour day-of-month month day-of-week) such as "0 3 * * *", 6 (year last), 7 (second first, year last), @yearly @annually @monthly @weekly @daily @midnight @hourly or "@every 6h", got 4 fields',
    ],
  },
  {
    rule: 'time zone in CRON_TZ= and in timezone',
    yaml: `${HEAD}items:\n  - prompt: hi\nschedule:\n  cron: "CRON_TZ=Asia/Tokyo 0 9 * * *"\n  timezone: Asia/Tokyo\n`,
    errors: [
      '10:13: schedule.timezone "Asia/Tokyo" and the cron\'s CRON_TZ=Asia/Tokyo both set the time zone; Temporal takes it from one place only, so remove one',
    ],
  },
  {
    rule: 'unknown time zone',
    yaml: `${HEAD}items:\n  - prompt: hi\nschedule:\n  cron: "0 3 * * *"\n  timezone: Europe/Berln\n`,
    errors: [
      '10:13: schedule.timezone must be an IANA time zone such as "Europe/Berlin", got "Europe/Berln"; did you mean "Europe/Berlin"?',
    ],
  },
  {
    rule: 'overlap enum',
    yaml: `${HEAD}items:\n  - prompt: hi\nschedule:\n  cron: "0 3 * * *"\n  overlap: queue\n`,
    errors: ['10:12: schedule.overlap must be one of skip, buffer_one, allow_all, got "queue"'],
  },
  {
    rule: 'max_in_flight zero',
    yaml: `${HEAD}concurrency:\n  max_in_flight: 0\nitems:\n  - prompt: hi\n`,
    errors: ['7:18: concurrency.max_in_flight must be a whole number from 1 to 2000, got 0'],
  },
  {
    rule: 'concurrency.shared without a limit',
    yaml: `${HEAD}concurrency:\n  shared:\n    per: model\nitems:\n  - prompt: hi\n`,
    errors: ['8:5: concurrency.shared needs max_in_flight or creates_per_minute (or both)'],
  },
  {
    rule: 'concurrency.shared with a bad number',
    yaml: `${HEAD}concurrency:\n  shared:\n    max_in_flight: 0\nitems:\n  - prompt: hi\n`,
    errors: ['8:20: concurrency.shared.max_in_flight must be a whole number from 1 to 2000, got 0'],
  },
  {
    rule: 'concurrency.shared per something else',
    yaml: `${HEAD}concurrency:\n  shared:\n    creates_per_minute: 5\n    per: keys\nitems:\n  - prompt: hi\n`,
    errors: ['9:10: concurrency.shared.per must be one of key, model, got "keys"; did you mean "key"?'],
  },
  {
    rule: 'retries.create enum',
    yaml: `${HEAD}retries:\n  create: never\nitems:\n  - prompt: hi\n`,
    errors: ['7:11: retries.create must be one of safe, always, got "never"'],
  },
  {
    rule: 'retries.stop_after_failures range',
    yaml: `${HEAD}retries:\n  stop_after_failures: -1\nitems:\n  - prompt: hi\n`,
    errors: ['7:24: retries.stop_after_failures must be a whole number from 0 to 1000000, got -1'],
  },
  {
    rule: 's3 storage without s3 section',
    yaml: `${HEAD}items:\n  - prompt: hi\noutput:\n  storage: s3\n`,
    errors: ['9:12: output.storage s3 needs an output.s3 section with at least bucket'],
  },
  {
    rule: 's3 bucket name',
    yaml: `${HEAD}items:\n  - prompt: hi\noutput:\n  storage: s3\n  s3:\n    bucket: My_Bucket\n`,
    errors: ['11:13: output.s3.bucket must be an S3 bucket name (3-63 of a-z 0-9 . -), got "My_Bucket"'],
  },
  {
    rule: 'matrix value invalid for its parameter',
    yaml: `${HEAD}matrix:\n  ratio: ["16:9", square]\nitems:\n  - prompt: hi\n`,
    errors: ['7:19: matrix.ratio[1]: ratio must be an aspect ratio such as "16:9" (quote it in YAML), got "square"'],
  },
  {
    rule: 'matrix key reserved',
    yaml: `${HEAD}matrix:\n  index: [1, 2]\nitems:\n  - prompt: hi\n`,
    errors: ["7:3: matrix.index: matrix key 'index' is reserved: {index} is built in"],
  },
  { rule: 'items not a list', yaml: `${HEAD}items:\n  prompt: hi\n`, errors: ['7:3: items must be a list of items, got a map'] },
  { rule: 'version other than 1', yaml: `version: 2\n${HEAD}items:\n  - prompt: hi\n`, errors: ['1:10: version must be 1, got 2'] },
  { rule: 'YAML syntax error', yaml: `${HEAD}items:\n  - prompt: "unterminated\n`, errors: ['8:1: YAML: Missing closing "quote'] },
  { rule: 'YAML duplicate key', yaml: `${HEAD}items:\n  - prompt: a\n    prompt: b\n`, errors: ['8:5: YAML: Map keys must be unique'] },
  { rule: 'empty file', yaml: ``, errors: ['1:1: the job file is empty: it needs at least name, gateway and items'] },
  {
    rule: 'several errors sorted by position',
    yaml: `name: T\ngateway:\n  base_urls: [http://127.0.0.1:8787]\ndefaults:\n  model: m\n  seconds: x\nitems:\n  - promt: a\n`,
    errors: [
      '1:7: name must be a name of a-z, 0-9 and -, starting with a letter or digit, at most 63 long, got "T"',
      '6:12: defaults.seconds must be a string of digits such as "5", got "x"',
      "8:5: items[0].promt: unknown key 'promt', did you mean 'prompt'?",
    ],
  },
];
