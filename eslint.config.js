import js from '@eslint/js';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

// The layers of src/ (docs/architecture.md): what each folder may import of the project. Anything not
// listed for a folder is refused by import-x/no-restricted-paths; config/ may be imported by anyone,
// cli/ and main.ts are the top and may import anything.
const FOLDERS = ['api', 'auth', 'capture', 'cli', 'config', 'domain', 'jobs', 'net', 'notify', 'observability', 'runner', 'services', 'store'];
const TIER = ['store', 'jobs', 'runner', 'notify', 'capture', 'auth', 'observability'];
const BELOW = ['net', 'domain', 'config'];
const MAY_IMPORT = {
  domain: [],
  net: ['domain', 'config'],
  store: ['domain', 'config'],
  // The runner takes a definition and variables and hands back data: never the store (nor the API).
  runner: [...TIER.filter((f) => f !== 'store' && f !== 'runner'), ...BELOW],
  capture: [...TIER.filter((f) => f !== 'capture'), ...BELOW],
  auth: [...TIER.filter((f) => f !== 'auth'), ...BELOW],
  jobs: [...TIER.filter((f) => f !== 'jobs'), ...BELOW],
  notify: [...TIER.filter((f) => f !== 'notify'), ...BELOW],
  observability: [...TIER.filter((f) => f !== 'observability'), ...BELOW],
  services: [...TIER, ...BELOW],
  api: ['services', ...TIER, ...BELOW],
};

// The API reaches data only through services. Two files of src/store/ are shared vocabulary it may
// read: database.ts (the row types its presenters turn into API shapes) and errors.ts (which driver
// errors mean "unavailable" or "full", for the error answers).
const API_STORE_ZONE = {
  target: 'src/api',
  from: 'src/store',
  except: ['./database.ts', './errors.ts'],
  message: 'The API reaches the store through services.',
};

const layerZones = [
  ...Object.entries(MAY_IMPORT).map(([layer, allowed]) => ({
    target: `src/${layer}`,
    from: [...FOLDERS.filter((f) => f !== layer && !allowed.includes(f)).map((f) => `src/${f}`), 'src/main.ts'],
    message: `src/${layer}/ may import ${allowed.length ? allowed.map((f) => `${f}/`).join(', ') : 'nothing of the project'}.`,
  })),
  API_STORE_ZONE,
  { target: 'src', from: ['test', 'bench', 'scripts', 'dashboard'], message: 'src/ never imports tests, benchmarks, scripts or the dashboard.' },
  // The dashboard is built for the browser: of the server it shares only domain/ and the API schemas.
  {
    target: 'dashboard',
    from: 'src/**',
    except: [`${import.meta.dirname}/src/domain/**`, `${import.meta.dirname}/src/api/**/schemas.ts`],
    message: 'The dashboard imports only src/domain/ and src/api/**/schemas.ts of the server.',
  },
];

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', fetch: 'readonly', structuredClone: 'readonly', AbortController: 'readonly' } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-control-regex': 'off',
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  // Which folder may import which (docs/architecture.md). Only src/ and dashboard/ are held to it:
  // tests, benchmarks and scripts may import anything.
  {
    files: ['src/**/*.ts', 'dashboard/**/*.{ts,tsx}'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        createTypeScriptImportResolver({ project: ['tsconfig.json', 'dashboard/tsconfig.json'], noWarnOnMultipleProjects: true }),
      ],
    },
    rules: { 'import-x/no-restricted-paths': ['error', { basePath: import.meta.dirname, zones: layerZones }] },
  },
);
