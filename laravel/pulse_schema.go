package laravel

import (
	"context"
	"fmt"
)

// CreatePulseTables creates pulse_values, pulse_entries and pulse_aggregates with the DDL that
// Laravel's schema builder produces from Pulse's migration (2023_06_07_000001_create_pulse_tables):
// key_hash is a virtual column unhex(md5(key)) on MySQL and MariaDB, a stored md5(key)::uuid on
// PostgreSQL, and a plain string that Pulse fills itself on SQLite. It is for tests and demos; an app
// creates them with `php artisan migrate`.
func CreatePulseTables(ctx context.Context, c *Conn) error {
	for _, stmt := range pulseDDL(c.dialect) {
		if _, err := c.db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create Pulse tables: %s: %w", stmt, c.translate(err))
		}
	}
	return nil
}

func pulseDDL(d Dialect) []string {
	switch d {
	case MySQL:
		keyHash := "`key_hash` char(16) character set binary as (unhex(md5(`key`)))"
		tail := " default character set utf8mb4 collate 'utf8mb4_unicode_ci'"
		return []string{
			"create table `pulse_values` (`id` bigint unsigned not null auto_increment primary key, `timestamp` int unsigned not null, `type` varchar(255) not null, `key` mediumtext not null, " + keyHash + ", `value` mediumtext not null)" + tail,
			"alter table `pulse_values` add index `pulse_values_timestamp_index`(`timestamp`)",
			"alter table `pulse_values` add index `pulse_values_type_index`(`type`)",
			"alter table `pulse_values` add unique `pulse_values_type_key_hash_unique`(`type`, `key_hash`)",
			"create table `pulse_entries` (`id` bigint unsigned not null auto_increment primary key, `timestamp` int unsigned not null, `type` varchar(255) not null, `key` mediumtext not null, " + keyHash + ", `value` bigint null)" + tail,
			"alter table `pulse_entries` add index `pulse_entries_timestamp_index`(`timestamp`)",
			"alter table `pulse_entries` add index `pulse_entries_type_index`(`type`)",
			"alter table `pulse_entries` add index `pulse_entries_key_hash_index`(`key_hash`)",
			"alter table `pulse_entries` add index `pulse_entries_timestamp_type_key_hash_value_index`(`timestamp`, `type`, `key_hash`, `value`)",
			"create table `pulse_aggregates` (`id` bigint unsigned not null auto_increment primary key, `bucket` int unsigned not null, `period` mediumint unsigned not null, `type` varchar(255) not null, `key` mediumtext not null, " + keyHash + ", `aggregate` varchar(255) not null, `value` decimal(20, 2) not null, `count` int unsigned null)" + tail,
			"alter table `pulse_aggregates` add unique `pulse_aggregates_bucket_period_type_aggregate_key_hash_unique`(`bucket`, `period`, `type`, `aggregate`, `key_hash`)",
			"alter table `pulse_aggregates` add index `pulse_aggregates_period_bucket_index`(`period`, `bucket`)",
			"alter table `pulse_aggregates` add index `pulse_aggregates_type_index`(`type`)",
			"alter table `pulse_aggregates` add index `pulse_aggregates_period_type_aggregate_bucket_index`(`period`, `type`, `aggregate`, `bucket`)",
		}
	case Postgres:
		keyHash := `"key_hash" uuid generated always as (md5("key")::uuid) stored`
		return []string{
			`create table "pulse_values" ("id" bigserial not null primary key, "timestamp" integer not null, "type" varchar(255) not null, "key" text not null, ` + keyHash + `, "value" text not null)`,
			`create index "pulse_values_timestamp_index" on "pulse_values" ("timestamp")`,
			`create index "pulse_values_type_index" on "pulse_values" ("type")`,
			`alter table "pulse_values" add constraint "pulse_values_type_key_hash_unique" unique ("type", "key_hash")`,
			`create table "pulse_entries" ("id" bigserial not null primary key, "timestamp" integer not null, "type" varchar(255) not null, "key" text not null, ` + keyHash + `, "value" bigint null)`,
			`create index "pulse_entries_timestamp_index" on "pulse_entries" ("timestamp")`,
			`create index "pulse_entries_type_index" on "pulse_entries" ("type")`,
			`create index "pulse_entries_key_hash_index" on "pulse_entries" ("key_hash")`,
			`create index "pulse_entries_timestamp_type_key_hash_value_index" on "pulse_entries" ("timestamp", "type", "key_hash", "value")`,
			`create table "pulse_aggregates" ("id" bigserial not null primary key, "bucket" integer not null, "period" integer not null, "type" varchar(255) not null, "key" text not null, ` + keyHash + `, "aggregate" varchar(255) not null, "value" decimal(20, 2) not null, "count" integer null)`,
			`alter table "pulse_aggregates" add constraint "pulse_aggregates_bucket_period_type_aggregate_key_hash_unique" unique ("bucket", "period", "type", "aggregate", "key_hash")`,
			`create index "pulse_aggregates_period_bucket_index" on "pulse_aggregates" ("period", "bucket")`,
			`create index "pulse_aggregates_type_index" on "pulse_aggregates" ("type")`,
			`create index "pulse_aggregates_period_type_aggregate_bucket_index" on "pulse_aggregates" ("period", "type", "aggregate", "bucket")`,
		}
	}
	return []string{
		`create table "pulse_values" ("id" integer primary key autoincrement not null, "timestamp" integer not null, "type" varchar not null, "key" text not null, "key_hash" varchar not null, "value" text not null)`,
		`create index "pulse_values_timestamp_index" on "pulse_values" ("timestamp")`,
		`create index "pulse_values_type_index" on "pulse_values" ("type")`,
		`create unique index "pulse_values_type_key_hash_unique" on "pulse_values" ("type", "key_hash")`,
		`create table "pulse_entries" ("id" integer primary key autoincrement not null, "timestamp" integer not null, "type" varchar not null, "key" text not null, "key_hash" varchar not null, "value" integer)`,
		`create index "pulse_entries_timestamp_index" on "pulse_entries" ("timestamp")`,
		`create index "pulse_entries_type_index" on "pulse_entries" ("type")`,
		`create index "pulse_entries_key_hash_index" on "pulse_entries" ("key_hash")`,
		`create index "pulse_entries_timestamp_type_key_hash_value_index" on "pulse_entries" ("timestamp", "type", "key_hash", "value")`,
		`create table "pulse_aggregates" ("id" integer primary key autoincrement not null, "bucket" integer not null, "period" integer not null, "type" varchar not null, "key" text not null, "key_hash" varchar not null, "aggregate" varchar not null, "value" numeric not null, "count" integer)`,
		`create unique index "pulse_aggregates_bucket_period_type_aggregate_key_hash_unique" on "pulse_aggregates" ("bucket", "period", "type", "aggregate", "key_hash")`,
		`create index "pulse_aggregates_period_bucket_index" on "pulse_aggregates" ("period", "bucket")`,
		`create index "pulse_aggregates_type_index" on "pulse_aggregates" ("type")`,
		`create index "pulse_aggregates_period_type_aggregate_bucket_index" on "pulse_aggregates" ("period", "type", "aggregate", "bucket")`,
	}
}
