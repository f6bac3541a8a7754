import type { Migration } from 'kysely/migration';
import * as m0001 from './0001_projects_and_api_keys.ts';
import * as m0002 from './0002_templates_messages_webhooks.ts';
import * as m0003 from './0003_fair_queues.ts';
import * as m0004d from './0004_dispatch_pipeline.ts';
import * as m0004 from './0004_webhook_pipeline.ts';
import * as m0005 from './0005_whatsapp.ts';
import * as m0006 from './0006_tenant_limits.ts';
import * as m0007 from './0007_worker_heartbeats.ts';
import * as m0008 from './0008_request_path.ts';
import * as m0009e from './0009_events_feed.ts';
import * as m0009s from './0009_sending.ts';
import * as m0009w from './0009_webhook_endpoints.ts';
import * as m0010c from './0010_message_counts.ts';
import * as m0011 from './0011_keyed_by_project.ts';
import * as m0012r from './0012_rich_templates.ts';
import * as m0013r from './0013_replies_opt_outs.ts';
import * as m0015w from './0015_whatsapp_2026.ts';
import * as m0016r from './0016_retention.ts';
import * as m0017c from './0017_cost.ts';

/** Every migration, in order. Names sort in the order they must run. */
export const migrations: Record<string, Migration> = {
  '0001_projects_and_api_keys': m0001,
  '0002_templates_messages_webhooks': m0002,
  '0003_fair_queues': m0003,
  '0004_dispatch_pipeline': m0004d,
  '0004_webhook_pipeline': m0004,
  '0005_whatsapp': m0005,
  '0006_tenant_limits': m0006,
  '0007_worker_heartbeats': m0007,
  '0008_request_path': m0008,
  '0009_events_feed': m0009e,
  '0009_sending': m0009s,
  '0009_webhook_endpoints': m0009w,
  '0010_message_counts': m0010c,
  '0011_keyed_by_project': m0011,
  '0012_rich_templates': m0012r,
  '0013_replies_opt_outs': m0013r,
  '0015_whatsapp_2026': m0015w,
  '0016_retention': m0016r,
  '0017_cost': m0017c,
};
