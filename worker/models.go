package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/artisan-go/artisan-go/laravel"
	"github.com/artisan-go/artisan-go/payload"
)

// Model tells the worker where a model class's rows are, when Eloquent's default naming
// (laravel.ModelTable) does not find them.
type Model struct {
	Table string // "" is Eloquent's default: the snake-case plural of the class basename
	Key   string // the primary key column; "" is id
	// Connection is the database connection the model's rows live on, when the job does not say.
	Connection string
}

// ModelFinder looks up which keys of a model exist. *laravel.Conn is one; a Params.Conn that is not
// one leaves models unchecked.
type ModelFinder interface {
	ModelKeys(ctx context.Context, p *laravel.ModelKeysParams) (map[string]bool, error)
}

// The database finds models.
var _ ModelFinder = (*laravel.Conn)(nil)

// ModelNotFoundClass is the exception PHP throws when a SerializesModels job's model is gone.
const ModelNotFoundClass = `Illuminate\Database\Eloquent\ModelNotFoundException`

// modelIdentifierClass is the class SerializesModels writes in place of a model or collection.
const modelIdentifierClass = `Illuminate\Contracts\Database\ModelIdentifier`

// ModelTableError reports a model whose table does not exist: a configuration problem, not the job's.
type ModelTableError struct {
	Model string // the model class
	Table string
	Err   error
}

// Error names the model, the table and the setting that fixes it.
func (e *ModelTableError) Error() string {
	return fmt.Sprintf("model %s: table %q does not exist; set its table under models (models: [{class: %q, table: ...}]) or create the table", e.Model, e.Table, e.Model)
}

// Unwrap returns the database's error.
func (e *ModelTableError) Unwrap() error { return e.Err }

// checkModels does what PHP's SerializesModels does when it unserializes a job: it looks up every model
// the command holds, its own and those of the objects nested in it (a queued listener's event, a
// mailable, a notification: each restores its models in its own __unserialize). A single model whose
// row is gone is returned as the ModelNotFoundException PHP throws; a collection keeps only the models
// that still exist, as Eloquent's restoreCollection does, so the handler sees the ids PHP's handle()
// would. Models on another connection than the worker's database (Config.DBConnection) are not checked
// (logged once per class).
func (w *Worker) checkModels(ctx context.Context, r *jobRun) (*Exception, error) {
	finder, ok := w.conn.(ModelFinder)
	if !ok {
		return nil, nil
	}
	c := newModelCheck(finder, w.cfg.Models, w.cfg.DBConnection, func(class, conn string) {
		if w.modelWarned.add(class) {
			w.log.Warn("model on another database connection than the worker's: not checked before its jobs run",
				"model", class, "connection", conn, "worker_connection", w.cfg.DBConnection)
		}
	})
	return c.object(ctx, r.cmd)
}

// modelCheck walks a command for the models PHP's unserialize restores.
type modelCheck struct {
	finder       ModelFinder
	models       map[string]Model // Config.Models
	dbConnection string           // Config.DBConnection
	// elsewhere is told of a model on another database connection, which is not checked.
	elsewhere func(class, connection string)
	seen      map[*payload.Object]bool // objects walked: a back-reference can make a cycle
}

func newModelCheck(finder ModelFinder, models map[string]Model, dbConnection string, elsewhere func(class, connection string)) *modelCheck {
	return &modelCheck{finder: finder, models: models, dbConnection: dbConnection, elsewhere: elsewhere, seen: map[*payload.Object]bool{}}
}

// object checks the models of o in the order PHP's unserialize restores them: the objects nested in
// it first (PHP calls their __unserialize before that of the object holding them), then its own, the
// properties whose value is a ModelIdentifier (SerializesModels writes one for each model or
// collection property, never inside an array).
func (c *modelCheck) object(ctx context.Context, o *payload.Object) (*Exception, error) {
	if c.seen[o] {
		return nil, nil
	}
	c.seen[o] = true
	for _, p := range o.Props {
		if e, err := c.nested(ctx, p.Value); e != nil || err != nil {
			return e, err
		}
	}
	for _, p := range o.Props {
		if id, ok := p.Value.(*payload.Object); ok && id.Class == modelIdentifierClass {
			if e, err := c.identifier(ctx, id); e != nil || err != nil {
				return e, err
			}
		}
	}
	return nil, nil
}

// nested checks the objects a value holds, in arrays too.
func (c *modelCheck) nested(ctx context.Context, v payload.Value) (*Exception, error) {
	switch x := v.(type) {
	case *payload.Object:
		if x.Class != modelIdentifierClass {
			return c.object(ctx, x)
		}
	case *payload.Array:
		for _, e := range x.Entries {
			if ex, err := c.nested(ctx, e.Value); ex != nil || err != nil {
				return ex, err
			}
		}
	}
	return nil, nil
}

// identifier looks up the model or collection one ModelIdentifier names.
func (c *modelCheck) identifier(ctx context.Context, id *payload.Object) (*Exception, error) {
	class, _ := id.Get("class")
	className, _ := class.(string)
	ids, _ := id.Get("id")
	conn, _ := id.Get("connection")
	connName, _ := conn.(string)
	m := c.models[className]
	if connName == "" {
		connName = m.Connection
	}
	if className == "" {
		return nil, nil
	}
	if connName != "" && c.dbConnection != "" && connName != c.dbConnection {
		// One database is reached; PHP loads the model from its own connection.
		if c.elsewhere != nil {
			c.elsewhere(className, connName)
		}
		return nil, nil
	}
	table := m.Table
	if table == "" {
		table = laravel.ModelTable(className)
	}
	list, isList := ids.(*payload.Array)
	var keys []any
	if isList {
		for _, e := range list.Entries {
			keys = append(keys, e.Value)
		}
	} else if ids != nil {
		keys = []any{ids}
	}
	found, err := c.finder.ModelKeys(ctx, &laravel.ModelKeysParams{Table: table, Key: m.Key, IDs: keys})
	if errors.Is(err, laravel.ErrMissingTable) {
		return nil, &ModelTableError{Model: className, Table: table, Err: err}
	}
	if err != nil {
		return nil, err
	}
	if !isList {
		if ids == nil || !found[keyString(ids)] {
			return newException(ModelNotFoundClass, "No query results for model ["+className+"].", nil), nil
		}
		return nil, nil
	}
	kept := &payload.Array{}
	for _, e := range list.Entries {
		if found[keyString(e.Value)] {
			kept.Entries = append(kept.Entries, e)
		}
	}
	if len(kept.Entries) != len(list.Entries) {
		id.Set("id", kept)
	}
	return nil, nil
}

// keyString writes a model key as the database returns it.
func keyString(v any) string {
	switch k := v.(type) {
	case int64:
		return strconv.FormatInt(k, 10)
	case string:
		return k
	}
	return fmt.Sprint(v)
}

// deleteWhenMissingModels reports whether the job asks to be deleted when a model is gone, as PHP's
// CallQueuedHandler::handleModelNotFound decides it. Up to 12.x PHP reads the default of a class's
// deleteWhenMissingModels property (or, in 12.x, its DeleteWhenMissingModels attribute): before 12.0
// the class the job is displayed as (for a queued mailable or notification the mailable's or the
// notification's, for a queued listener the listener's), from 12.0 the command's class (for those
// wrappers Laravel's own, which has none). Go cannot read a PHP class, so the configuration names the
// classes that set it (Config.DeleteWhenMissingModels); before 9.4, which serializes every property,
// the serialized object of that class answers too (its value is the default unless the job changed
// it). From 9.4 SerializesModels leaves out a property at its default, so one in the payload is not
// the default PHP reads, and only the configuration counts. From 13.0 PHP reads the payload's
// deleteWhenMissingModels key alone.
func (w *Worker) deleteWhenMissingModels(r *jobRun) bool {
	if w.version.AtLeast(13, 0) {
		return r.env.DeleteWhenMissingModels != nil && *r.env.DeleteWhenMissingModels
	}
	class := r.displayName
	if w.version.AtLeast(12, 0) {
		class = r.class
	}
	if w.cfg.DeleteWhenMissingModels[class] {
		return true
	}
	if w.version.AtLeast(9, 4) {
		return false
	}
	var obj *payload.Object
	if r.cmd != nil && r.cmd.Class == class {
		obj = r.cmd
	} else if r.cmd != nil && wrappers[r.cmd.Class] {
		for _, p := range r.cmd.Props {
			if o, ok := p.Value.(*payload.Object); ok && o.Class == class {
				obj = o
				break
			}
		}
	}
	if obj != nil {
		if v, ok := obj.Get("deleteWhenMissingModels"); ok {
			if b, ok := v.(bool); ok {
				return b
			}
		}
	}
	return false
}

// modelNotFound applies CallQueuedHandler::handleModelNotFound: delete the job when it asks for that,
// otherwise fail it with the exception. As in PHP (whose failed() path unserializes the command again
// and throws the same exception), the failure writes failed_jobs and nothing more: no batch failure or
// failed() hooks. From 11.39 the unique lock named in the payload's context is released first; from
// 12.51 a deleted job of a batch counts as the batch's success.
func (w *Worker) modelNotFound(ctx context.Context, r *jobRun, e *Exception) {
	j := r.rj.job
	if _, ok := hiddenContext(r.env, "laravel_unique_job_key"); ok && w.version.AtLeast(11, 39) {
		w.releaseUniqueLock(ctx, r)
	}
	if w.deleteWhenMissingModels(r) {
		var batch *laravel.BatchStep
		if r.env.BatchID != nil && *r.env.BatchID != "" && r.env.UUID != "" && w.version.AtLeast(12, 51) {
			batch, _ = w.batchSuccess(r)
		}
		if w.completeLocked(r.rj, "delete", func(ctx context.Context) error { return w.deleteWithChain(ctx, j, nil, batch) }, &w.stats.deleted) {
			w.log.Info("Deleted: a model is missing (deleteWhenMissingModels)", "class", r.displayName, "id", j.ID, "error", e.Message)
			w.report(r, EventSuccess, "deleted", nil)
		}
		return
	}
	w.failRow(ctx, r, e, nil, nil)
}

// onceSet remembers names, so that something is logged once per name.
type onceSet struct {
	mu   sync.Mutex
	seen map[string]bool
}

// add reports whether name is new.
func (s *onceSet) add(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[name] {
		return false
	}
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	s.seen[name] = true
	return true
}
