import { AppError, invalid } from '../domain/errors.js';
import type { StoredMessage } from '../domain/messages.js';
import type { ImportFormat, ImportOptions } from '../import/index.js';
import {
  IMPORT_LIMITS,
  type ImportedTest,
  ImportedTestSchema,
  type ImportResult,
  nestedDeeperThan,
} from '../import/result.js';
import type { BucketService } from './buckets.js';
import type { MessageService } from './messages.js';
import type { Actor } from './principal.js';
import type { TestAggregate, TestService } from './tests.js';
import type { TestCreateInput } from './test-transfer.js';
import { assertValid } from './validation.js';

/** What `POST /buckets/<key>/imports` reads. */
export type ImportRequest =
  | {
      format?: ImportFormat | undefined;
      content: unknown;
      environment?: unknown;
      options?: Omit<ImportOptions, 'environment'> | undefined;
      dry_run?: boolean | undefined;
    }
  | {
      format: 'messages';
      message_ids: string[];
      chain?: boolean | undefined;
      name?: string | undefined;
      dry_run?: boolean | undefined;
    };

export interface ImportPreview {
  format: ImportFormat | 'messages';
  tests: ImportedTest[];
  notes: string[];
}

/**
 * Files of other tools (and the bucket's captured messages) turned into tests. The conversion is
 * pure (src/import/); creating goes through the test service like any `POST …/tests`, so every
 * imported test gets its revision and can be deleted (and undone) like one made by hand.
 */
export class ImportService {
  constructor(
    private readonly deps: { buckets: BucketService; tests: TestService; messages: MessageService },
  ) {}

  /** The tests a request would create, checked as a create would check them; creates nothing. */
  async preview(actor: Actor, bucketKey: string, body: ImportRequest): Promise<ImportPreview> {
    await this.deps.buckets.require(actor, bucketKey);
    // The converters (and the parsers they use) load on the first import, not with the server.
    const { importFile } = await import('../import/index.js');
    const { exchangesFromMessages, importExchanges } = await import('../import/traffic.js');
    let result: ImportResult & { format: ImportPreview['format'] };
    if (body.format === 'messages') {
      const messages: StoredMessage[] = [];
      for (const id of new Set(body.message_ids))
        messages.push(await this.deps.messages.detail(actor, bucketKey, id));
      const withRequest = messages.filter((m) => m.request !== null);
      if (withRequest.length === 0) throw invalid('/message_ids', 'name no message with a request');
      result = {
        format: 'messages',
        ...importExchanges(exchangesFromMessages(withRequest), {
          chain: body.chain ?? false,
          ...(body.name !== undefined && { name: body.name }),
        }),
      };
    } else {
      for (const [field, value] of [
        ['/content', body.content],
        ['/environment', body.environment],
      ] as const) {
        if (nestedDeeperThan(value, IMPORT_LIMITS.depth))
          throw invalid(field, `nests objects and arrays more than ${IMPORT_LIMITS.depth} levels deep`);
      }
      const size =
        typeof body.content === 'string' ? body.content.length : JSON.stringify(body.content ?? null).length;
      if (size > IMPORT_LIMITS.contentLength)
        throw invalid('/content', `is longer than ${IMPORT_LIMITS.contentLength} characters`);
      result = importFile(body.content, body.format, { ...body.options, environment: body.environment });
    }
    if (result.tests.length > IMPORT_LIMITS.tests)
      throw invalid(
        '/content',
        `makes ${result.tests.length} tests; at most ${IMPORT_LIMITS.tests} per import`,
      );
    result.tests.forEach((test, i) => {
      try {
        assertValid(ImportedTestSchema, test, `/tests/${i}/`);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        const field = body.format === 'messages' ? '/message_ids' : '/content';
        throw invalid(field, `does not make a valid test: ${error.message}`);
      }
    });
    return { format: result.format, tests: result.tests, notes: result.notes };
  }

  /** Creates the tests of a request in one transaction; answers them with the preview's notes. */
  async create(
    actor: Actor,
    bucketKey: string,
    body: ImportRequest,
  ): Promise<{ preview: ImportPreview; created: TestAggregate[] }> {
    const preview = await this.preview(actor, bucketKey, body);
    const created = await this.deps.tests.create(actor, bucketKey, preview.tests as TestCreateInput[], {
      isArray: true,
    });
    return { preview, created };
  }
}
