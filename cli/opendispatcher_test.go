package cli

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/artisan-go/artisan-go/dispatch"
	"github.com/artisan-go/artisan-go/internal/phpapp"
	"github.com/artisan-go/artisan-go/internal/testenv"
	"github.com/artisan-go/artisan-go/payload"
)

// TestOpenDispatcherPHPRuns dispatches from Go through OpenDispatcher, reading only the application's
// .env, a plain job and an encrypted one in one transaction, and PHP's own queue:work runs both.
func TestOpenDispatcherPHPRuns(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, db testenv.Database) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		app := phpapp.New(t, db)
		d, conn, closeAll, err := OpenDispatcher(ctx, DispatcherParams{EnvFile: app.EnvFile()})
		if err != nil {
			t.Fatal(err)
		}
		defer closeAll()
		err = conn.InTx(ctx, func(tx *sqlx.Tx) error {
			if _, err := d.Dispatch(ctx, tx, dispatch.Job{Command: payload.NewObject(`App\Jobs\Plain`).Set("name", "from Go")}); err != nil {
				return err
			}
			_, err := d.Dispatch(ctx, tx, dispatch.Job{Command: payload.NewObject(`App\Jobs\Secret`).Set("label", "sealed").
				SetPrivate(`App\Jobs\Secret`, "password", "pw"), Encrypt: true})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := app.Artisan(ctx, "queue:work", "database", "--stop-when-empty"); err != nil {
			t.Fatal(err)
		}
		entries, err := app.Log(ctx)
		if err != nil {
			t.Fatal(err)
		}
		ran := map[string]map[string]any{}
		for _, e := range entries {
			ran[e.Class] = e.Props
		}
		if len(entries) != 2 || ran[`App\Jobs\Plain`]["name"] != "from Go" || ran[`App\Jobs\Secret`]["label"] != "sealed" {
			t.Errorf("PHP ran %+v, want the plain job with name \"from Go\" and the encrypted one labelled \"sealed\"", entries)
		}
	})
}

// TestOpenDispatcherRefusesWhatPushRefuses: a missing .env's database and a connection that is no
// database one are refused with queue:push's errors.
func TestOpenDispatcherRefusesWhatPushRefuses(t *testing.T) {
	t.Parallel()
	app := phpapp.New(t, testenv.SQLite(t))
	if _, _, _, err := OpenDispatcher(context.Background(), DispatcherParams{EnvFile: app.EnvFile(), Connection: "sync"}); err == nil {
		t.Error("OpenDispatcher onto the sync connection succeeded")
	}
	if _, err := dispatch.ForConn(nil, dispatch.Params{}); !errors.Is(err, dispatch.ErrInvalid) {
		t.Errorf("ForConn(nil): %v, want ErrInvalid", err)
	}
}
