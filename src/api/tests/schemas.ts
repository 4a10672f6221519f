import { type Static, Type } from '@sinclair/typebox';
import { EnvironmentInput } from '../../domain/environments.js';
import { IntervalSchema } from '../../domain/schedules.js';
import { StepInput } from '../../domain/steps.js';
import { EnvironmentOut } from '../environments/schemas.js';
import { ScheduleOut } from '../schedules/schemas.js';
import { OrNull, StringEnum } from '../../domain/schema.js';
import { Nullable } from '../shared/envelope.js';
import { StepOut } from '../steps/schemas.js';

const Name = Type.String({ minLength: 1, maxLength: 255 });
const Description = Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()]);
const DescriptionOut = Nullable(Type.String());
const DefaultEnvironmentRef = Type.String({
  maxLength: 64,
  description: 'An environment of the test or a shared one of the bucket; "" or null: unchanged',
});

const ImportedEnvironment = Type.Composite([
  Type.Object({ id: Type.Optional(Type.String({ maxLength: 64 })) }),
  EnvironmentInput,
]);

/** A new test: `{name, description}`, or a whole exported test, which is recreated with new ids. */
export const TestCreate = Type.Object({
  name: Name,
  description: Type.Optional(Description),
  default_environment_id: OrNull(DefaultEnvironmentRef),
  environments: OrNull(Type.Array(ImportedEnvironment, { maxItems: 100 })),
  shared_environments: OrNull(
    Type.Array(Type.Composite([Type.Object({ id: Type.String({ maxLength: 64 }) }), EnvironmentInput]), {
      maxItems: 100,
    }),
  ),
  steps: OrNull(Type.Array(StepInput, { maxItems: 200 })),
  schedules: OrNull(
    Type.Array(
      Type.Object({
        environment_id: Type.Optional(Type.String({ maxLength: 64 })),
        interval: IntervalSchema,
        note: Type.Optional(Type.String({ maxLength: 2_000 })),
      }),
      { maxItems: 100 },
    ),
  ),
});
/** One test, or an array of up to 100 (`if`/`then`/`else`, so an error names the field of the form sent). */
export const TestCreateBody = Type.Unsafe<Static<typeof TestCreate> | Static<typeof TestCreate>[]>({
  if: { type: 'array' },
  then: Type.Array(TestCreate, { minItems: 1, maxItems: 100 }),
  else: TestCreate,
});

/**
 * A test PUT. Read-only fields a client echoes back (`id`, `created_at`, `trigger_url`, `last_run`,
 * `schedules`, …) are ignored; null means "not given".
 */
export const TestPatch = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Description),
  default_environment_id: OrNull(DefaultEnvironmentRef),
  steps: OrNull(Type.Array(StepInput, { maxItems: 200 })),
});

/** POST …/tests: `restored_from` marks a test created again from the export of a deleted one. */
export const TestCreateQuery = Type.Object({
  restored_from: Type.Optional(
    Type.String({
      format: 'uuid',
      description:
        'The id of the deleted test this one brings back (the dashboard\'s "Undo" of a delete); ' +
        'its creation revision carries `restored_from` in its snapshot. A single test only.',
    }),
  ),
});

export const TestsQuery = Type.Object({
  count: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'Page size; default 50, at most 1000 (larger values are capped)',
    }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
});

const CreatedBy = Type.Object({ email: Type.String(), name: Type.String(), id: Type.String() });

export const LastRun = Nullable(
  Type.Object({
    test_run_id: Type.String(),
    result: Type.String(),
    environment_id: Type.String(),
    environment_name: Type.String(),
    region: Type.String(),
    source: Type.String(),
    started_at: Type.Number(),
    finished_at: Nullable(Type.Number()),
  }),
);

/** A list item (spec 2.2): no environments, steps, schedules or trigger URL. */
export const TestListItem = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: DescriptionOut,
  created_at: Type.Integer(),
  created_by: CreatedBy,
  default_environment_id: Type.String(),
});

/** The detail form (spec 2.2). */
export const TestDetail = Type.Object({
  ...TestListItem.properties,
  environments: Type.Array(EnvironmentOut),
  steps: Type.Array(StepOut),
  schedules: Type.Array(ScheduleOut),
  last_run: LastRun,
  trigger_url: Type.String(),
});

/** An environment in an export: only the settings it sets itself, so inheritance survives the trip. */
const ExportedEnvironment = Type.Unsafe<Record<string, unknown>>({
  type: 'object',
  additionalProperties: true,
});

/** The export document (`GET …/export`); POST it to …/tests to recreate the test. */
export const TestExportOut = Type.Object(
  {
    vigil_export_version: Type.Literal(1),
    id: Type.String(),
    name: Type.String(),
    description: DescriptionOut,
    default_environment_id: Type.String(),
    environments: Type.Array(ExportedEnvironment),
    shared_environments: Type.Array(ExportedEnvironment),
    steps: Type.Array(StepOut),
    schedules: Type.Array(
      Type.Object({ environment_id: Type.String(), interval: Type.String(), note: Type.String() }),
    ),
  },
  { additionalProperties: true },
);

export const SummariesQuery = Type.Object({
  count: Type.Optional(
    Type.Integer({
      minimum: 1,
      description: 'Page size; default 100, at most 1000 (larger values are capped)',
    }),
  ),
  offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
});

/** A row of the dashboard's tests list: the test, its schedules, last run and up to 20 recent runs. */
export const TestSummaryOut = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  description: DescriptionOut,
  default_environment_id: Type.String(),
  created_at: Type.Integer(),
  last_run: LastRun,
  schedules: Type.Array(
    Type.Object({ id: Type.String(), environment_id: Type.String(), interval: Type.String() }),
  ),
  recent_runs: Type.Array(
    Type.Object({
      test_run_id: Type.String(),
      result: Type.String(),
      started_at: Type.Number(),
      finished_at: Nullable(Type.Number()),
      response_time_ms: Nullable(Type.Number()),
    }),
    { description: 'Up to 20 newest finished (pass or fail) runs, oldest first' },
  ),
});

export const RevisionOut = Type.Object({
  uuid: Type.String(),
  timestamp: Type.Number(),
  item_type: Type.String(),
  item_id: Type.String(),
  action: Type.String(),
  author_uuid: Type.String(),
  author_name: Type.String(),
  author_email: Type.String(),
  organization_id: Type.String(),
  bucket_key: Type.String(),
  source: Type.String(),
  snapshot: Type.Unknown(),
});

export const RevisionParams = Type.Object({
  bucket_key: Type.String(),
  test_id: Type.String(),
  revision_uuid: Type.String(),
});

/** The answer of a restore: the test detail, and in `meta.skipped` what could not be restored. */
export const RestoreOut = Type.Object({
  data: TestDetail,
  meta: Type.Object({
    status: Type.Literal('success'),
    skipped: Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
      description: 'Parts of the snapshot left out because what they name no longer exists',
    }),
  }),
  error: Type.Null(),
});

export const RevisionsOut = Type.Object({
  test_revisions: Type.Array(RevisionOut),
  env_revisions: Type.Record(Type.String(), Type.Array(RevisionOut)),
});

export const EXPORT_FORMATS = ['vigil', 'postman', 'curl'] as const;

/** `…/export?format=`: the portable test (default), a Postman collection, or a cURL script. */
export const ExportQuery = Type.Object({
  format: Type.Optional(StringEnum(EXPORT_FORMATS)),
});
