import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_projects_and_api_keys.ts';
import * as m0002 from './0002_templates_messages_webhooks.ts';
import * as m0003 from './0003_fair_queues.ts';
import * as m0004 from './0004_dispatch_pipeline.ts';
import * as m0005 from './0005_webhook_pipeline.ts';
import * as m0006 from './0006_whatsapp.ts';
import * as m0007 from './0007_tenant_limits.ts';
import * as m0008 from './0008_worker_heartbeats.ts';
import * as m0009 from './0009_request_path.ts';
import * as m0010 from './0010_events_feed.ts';
import * as m0011 from './0011_sending.ts';
import * as m0012 from './0012_webhook_endpoints.ts';
import * as m0013 from './0013_message_counts.ts';
import * as m0014 from './0014_keyed_by_project.ts';
import * as m0015 from './0015_rich_templates.ts';
import * as m0016 from './0016_replies_opt_outs.ts';
import * as m0017 from './0017_whatsapp_2026.ts';
import * as m0018 from './0018_retention.ts';
import * as m0019 from './0019_due_deliveries_by_id.ts';
import * as m0020 from './0020_marketing_messages.ts';
import * as m0021 from './0021_cost.ts';
import * as m0022 from './0022_volume_tiers.ts';
import * as m0023 from './0023_compact_deliveries.ts';
import * as m0024 from './0024_waba_currency.ts';
import * as m0025 from './0025_compact_ids.ts';
import * as m0026 from './0026_deliveries_by_key.ts';
import * as m0027 from './0027_delivery_ids_as_bytes.ts';
import * as m0028 from './0028_time_partitions.ts';

/**
 * Every migration, in the order it runs: `NNNN_what`, numbered 0001, 0002, … without a gap or a
 * repeat (test/db/migrate.test.ts checks it). A new migration takes the next number.
 */
export const migrations: Record<string, Migration> = {
  '0001_projects_and_api_keys': m0001,
  '0002_templates_messages_webhooks': m0002,
  '0003_fair_queues': m0003,
  '0004_dispatch_pipeline': m0004,
  '0005_webhook_pipeline': m0005,
  '0006_whatsapp': m0006,
  '0007_tenant_limits': m0007,
  '0008_worker_heartbeats': m0008,
  '0009_request_path': m0009,
  '0010_events_feed': m0010,
  '0011_sending': m0011,
  '0012_webhook_endpoints': m0012,
  '0013_message_counts': m0013,
  '0014_keyed_by_project': m0014,
  '0015_rich_templates': m0015,
  '0016_replies_opt_outs': m0016,
  '0017_whatsapp_2026': m0017,
  '0018_retention': m0018,
  '0019_due_deliveries_by_id': m0019,
  '0020_marketing_messages': m0020,
  '0021_cost': m0021,
  '0022_volume_tiers': m0022,
  '0023_compact_deliveries': m0023,
  '0024_waba_currency': m0024,
  '0025_compact_ids': m0025,
  '0026_deliveries_by_key': m0026,
  '0027_delivery_ids_as_bytes': m0027,
  '0028_time_partitions': m0028,
};

/**
 * The names migrations had before they were numbered strictly (until November 2026 several
 * shared a number and ran unordered). A database that ran them under the old names has its
 * records renamed before migrating (migrate.ts), so it upgrades without running any again.
 */
export const LEGACY_NAMES: ReadonlyMap<string, string> = new Map([
  ['0004_webhook_pipeline', '0005_webhook_pipeline'],
  ['0005_whatsapp', '0006_whatsapp'],
  ['0006_tenant_limits', '0007_tenant_limits'],
  ['0007_worker_heartbeats', '0008_worker_heartbeats'],
  ['0008_request_path', '0009_request_path'],
  ['0009_events_feed', '0010_events_feed'],
  ['0009_sending', '0011_sending'],
  ['0009_webhook_endpoints', '0012_webhook_endpoints'],
  ['0010_message_counts', '0013_message_counts'],
  ['0011_keyed_by_project', '0014_keyed_by_project'],
  ['0012_rich_templates', '0015_rich_templates'],
  ['0013_replies_opt_outs', '0016_replies_opt_outs'],
  ['0015_whatsapp_2026', '0017_whatsapp_2026'],
  ['0016_retention', '0018_retention'],
]);
