package main

import (
	"reflect"
	"testing"

	"glle/engine"
)

// TestStageTotals checks that stage times are summed per prefixed name in the order the names
// first appear, keeping the background flag (the summaries of figures and generations).
func TestStageTotals(t *testing.T) {
	var tot stageTotals
	tot.add([]engine.StageTime{{Name: "knn", Seconds: 1}, {Name: "ordering", Seconds: 2, Background: true}}, "")
	tot.add([]engine.StageTime{{Name: "factor", Seconds: 0.5}, {Name: "ordering", Seconds: 4, Background: true}}, "")
	tot.add([]engine.StageTime{{Name: "factor", Seconds: 0.25}}, genStagePrefix)
	tot.add([]engine.StageTime{{Name: "factor", Seconds: 0.25}, {Name: "knn", Seconds: 3}}, "")
	want := []engine.StageTime{
		{Name: "knn", Seconds: 4},
		{Name: "ordering", Seconds: 6, Background: true},
		{Name: "factor", Seconds: 0.75},
		{Name: genStagePrefix + "factor", Seconds: 0.25},
	}
	if got := tot.list(); !reflect.DeepEqual(got, want) {
		t.Errorf("totals %v, want %v", got, want)
	}
	var empty stageTotals
	if got := empty.list(); len(got) != 0 {
		t.Errorf("empty totals %v", got)
	}
}
