package laravel_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/artisan-go/artisan-go/laravel"
)

// TestConnectionLostGalera: a Galera node cut off from the primary component wrote nothing, so its
// refusals count as a lost connection; the same numbers for other causes do not.
func TestConnectionLostGalera(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		err  *mysql.MySQLError
		want bool
	}{
		{&mysql.MySQLError{Number: 1047, SQLState: [5]byte{'0', '8', 'S', '0', '1'}, Message: "WSREP has not yet prepared node for application use"}, true},
		{&mysql.MySQLError{Number: 1047, Message: "Unknown command"}, false},
		{&mysql.MySQLError{Number: 1180, SQLState: [5]byte{'H', 'Y', '0', '0', '0'}, Message: "Error while appending streaming replication fragment(provider status: Not connected to Primary Component)"}, true},
		{&mysql.MySQLError{Number: 1180, Message: "Got error 28 \"No space left on device\" during COMMIT"}, false},
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}, false},
		{&mysql.MySQLError{Number: 1568, SQLState: [5]byte{'2', '5', '0', '0', '1'}, Message: "Transaction characteristics can't be changed while a transaction is in progress"}, true},
	} {
		if got := laravel.ConnectionLost(fmt.Errorf("delete 3 jobs: %w", c.err)); got != c.want {
			t.Errorf("ConnectionLost(%v) = %v, want %v", c.err, got, c.want)
		}
	}
	if laravel.ConnectionLost(errors.New("WSREP has not yet prepared node for application use")) {
		t.Error("a plain error with the message counts as a lost connection")
	}
}
