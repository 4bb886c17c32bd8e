package lists

import (
	"strings"
	"testing"
)

func TestUnique(t *testing.T) {
	if got := strings.Join(Unique([]string{"float", "bf16", "float", "half", "bf16"}), ","); got != "float,bf16,half" {
		t.Errorf("Unique = %s", got)
	}
	if Unique(nil) != nil {
		t.Error("Unique(nil) is not nil")
	}
}
