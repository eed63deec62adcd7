// 010_blobs: The content-addressed upload extension: blobs each workspace holds, which committed uploads
// reference them, multi-part uploads in progress, and the secret signing blob part URLs.
import { type Kysely, type Migration } from 'kysely';

export const m010Blobs: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('uploads').addColumn('source_format', 'text').execute();
    await db.schema
      .createTable('blobs')
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'integer', (c) => c.notNull())
      .addColumn('collecting_since', 'integer')
      .addPrimaryKeyConstraint('blobs_pk', ['workspace_id', 'sha256', 'size'])
      .execute();
    await db.schema.createIndex('blobs_last_used').on('blobs').column('last_used_at').execute();
    await db.schema
      .createTable('blob_refs')
      .addColumn('slug', 'text', (c) => c.notNull())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('blob_refs_pk', ['slug', 'sha256', 'size'])
      .execute();
    await db.schema.createIndex('blob_refs_blob').on('blob_refs').columns(['workspace_id', 'sha256', 'size']).execute();
    await db.schema
      .createTable('blob_uploads')
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('part_size', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('blob_uploads_pk', ['workspace_id', 'sha256', 'size', 'part_size'])
      .execute();
    await db.schema.createIndex('blob_uploads_updated').on('blob_uploads').column('updated_at').execute();
    await db.schema
      .createTable('service_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  },
};
