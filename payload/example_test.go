package payload_test

import (
	"fmt"

	"github.com/artisan-go/artisan-go/fixtures"
	"github.com/artisan-go/artisan-go/payload"
)

func ExampleUnserialize() {
	v, err := payload.Unserialize([]byte("O:8:\"App\\Ping\":2:{s:1:\"n\";i:1;s:7:\"\x00*\x00note\";d:0.5;}"))
	if err != nil {
		panic(err)
	}
	obj := v.(*payload.Object)
	note, _ := obj.Get("note")
	fmt.Println(obj.Class, obj.Props[1].Visibility, note)
	fmt.Println(string(payload.CanonicalJSON(obj)))

	_, err = payload.Unserialize([]byte(`s:5:"abc";`))
	fmt.Println(err)
	// Output:
	// App\Ping protected 0.5
	// {"@class":"App\\Ping","n":1,"note":0.5}
	// php unserialize: expected '"' after 5 bytes; the declared length does not match at offset 10
}

func ExampleSerialize() {
	job := payload.NewObject(`App\Jobs\SendReport`).
		Set("reportId", 77).
		SetProtected("format", "pdf").
		Set("queue", nil)
	b, _ := payload.Serialize(job)
	fmt.Printf("%q\n", b)
	// Output:
	// "O:19:\"App\\Jobs\\SendReport\":3:{s:8:\"reportId\";i:77;s:9:\"\x00*\x00format\";s:3:\"pdf\";s:5:\"queue\";N;}"
}

func ExampleBind() {
	env, _ := payload.ParseEnvelope(fixtures.Laravel883()["podcast"].Payload)
	cmd, _ := payload.DecodeCommand(env, nil)
	var job struct {
		User   payload.ModelIdentifier `php:"user"`
		Users  payload.ModelIdentifier `php:"users"`
		Status string                  `php:"status"`
	}
	if err := payload.Bind(cmd, &job); err != nil {
		panic(err)
	}
	fmt.Println(job.User.Class, job.User.ID, job.Users.IDs(), job.Status)
	// Output:
	// App\Models\User 1 [1 2] Published
}

func ExampleDecodeCommand() {
	kr, _ := payload.NewKeyring(fixtures.AppKey, nil, "AES-256-CBC")
	env, _ := payload.ParseEnvelope(fixtures.Laravel883()["secret"].Payload)
	cmd, err := payload.DecodeCommand(env, kr)
	if err != nil {
		panic(err)
	}
	token, _ := cmd.Get("token")
	fmt.Println(env.CommandEncrypted(), cmd.Class, token)
	// Output:
	// true App\Jobs\SecretJob s3cr3t-token
}

func ExampleNewJobPayload() {
	tries := 3
	b, _ := payload.NewJobPayload(payload.JobPayloadParams{
		LaravelVersion: "8.83",
		UUID:           "0a75d0e5-510e-4123-be33-94769161c86f",
		Command:        payload.NewObject(`App\Jobs\Ping`).Set("n", 1),
		MaxTries:       &tries,
	})
	fmt.Println(string(b))
	// Output:
	// {"uuid":"0a75d0e5-510e-4123-be33-94769161c86f","displayName":"App\\Jobs\\Ping","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"App\\Jobs\\Ping","command":"O:13:\"App\\Jobs\\Ping\":1:{s:1:\"n\";i:1;}"}}
}

func ExampleEnvelope_BackoffSpec() {
	env, _ := payload.ParseEnvelope([]byte(`{"job":"App\\Legacy@run","data":"","createdAt":1763700000,"delay":30}`))
	class, method := env.RawTarget()
	backoff, own := env.BackoffSpec()
	fmt.Println(env.IsRaw(), class, method, backoff, own)
	// Output:
	// true App\Legacy run 30 true
}

// RetryPayload writes the payload php artisan queue:retry pushes for a failed job: json_encode's
// default escaping, attempts reset, and here a refreshed retryUntil.
func ExampleRetryPayload() {
	failed := []byte(`{"uuid":"9a1c…","displayName":"App\\Jobs\\Café","attempts":3,"retryUntil":1700000000,"data":{"tags":{}}}`)
	until := int64(1800000000)
	out, err := payload.RetryPayload(failed, &payload.RetryUntil{Unix: &until})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"uuid":"9a1c\u2026","displayName":"App\\Jobs\\Caf\u00e9","attempts":0,"retryUntil":1800000000,"data":{"tags":[]}}
}
