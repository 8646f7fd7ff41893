package laravel

import (
	"os"
	"strings"
	"testing"
)

// TestSchemaDDLMatchesLaravel compares the DDL with what Laravel 8.83's schema builder printed for the
// same migrations (testdata/schema-laravel-8.83.tsv: dialect, migration, statement).
func TestSchemaDDLMatchesLaravel(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/schema-laravel-8.83.tsv")
	if err != nil {
		t.Fatal(err)
	}
	golden := map[string][]string{} // dialect + "/" + migration -> statements
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		golden[f[0]+"/"+f[1]] = append(golden[f[0]+"/"+f[1]], f[2])
	}
	for _, d := range []Dialect{MySQL, Postgres, SQLite} {
		for _, legacy := range []bool{false, true} {
			migrations := []string{"jobs", "failed_jobs", "job_batches", "cache", "cache_locks"}
			if legacy {
				migrations[0], migrations[1] = "jobs_legacy", "failed_jobs_legacy"
			}
			var want []string
			for _, m := range migrations {
				want = append(want, golden[string(d)+"/"+m]...)
			}
			got := schemaDDL(dialects[d], DefaultTables(), SchemaParams{LegacyJobsIndex: legacy, FailedJobsWithoutUUID: legacy})
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s legacy=%v:\n got %s\nwant %s", d, legacy, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
			}
		}
	}
}
