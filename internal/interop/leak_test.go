package interop

import (
	"testing"

	"github.com/artisan-go/artisan-go/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Main(m) }
