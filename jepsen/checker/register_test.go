package checker

import (
	"testing"

	"github.com/anishathalye/porcupine"
)

func op(client int, call, ret int64, in RegisterInput, out RegisterOutput) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Call: call, Return: ret, Input: in, Output: out}
}

// TestRegisterModel: the model accepts linearizable histories and refuses
// a stale read and a double compare-and-set win.
func TestRegisterModel(t *testing.T) {
	m := RegisterModel()
	ok := []porcupine.Operation{
		op(0, 0, 10, RegisterInput{Key: "a", Op: OpWrite, Value: 1}, RegisterOutput{}),
		op(1, 5, 15, RegisterInput{Key: "a", Op: OpRead}, RegisterOutput{Value: 1}),
		op(2, 20, 30, RegisterInput{Key: "a", Op: OpCAS, Expect: 1, Value: 2}, RegisterOutput{OK: true}),
		op(0, 40, 1<<62, RegisterInput{Key: "a", Op: OpWrite, Value: 3}, RegisterOutput{Unknown: true}),
		op(1, 50, 60, RegisterInput{Key: "a", Op: OpRead}, RegisterOutput{Value: 2}),
	}
	if !porcupine.CheckOperations(m, ok) {
		t.Fatal("a linearizable history was refused")
	}
	stale := []porcupine.Operation{
		op(0, 0, 10, RegisterInput{Key: "a", Op: OpWrite, Value: 1}, RegisterOutput{}),
		op(1, 20, 30, RegisterInput{Key: "a", Op: OpRead}, RegisterOutput{Value: 0}),
	}
	if porcupine.CheckOperations(m, stale) {
		t.Fatal("a stale read after a completed write was accepted")
	}
	doubleWin := []porcupine.Operation{
		op(0, 0, 10, RegisterInput{Key: "a", Op: OpWrite, Value: 1}, RegisterOutput{}),
		op(1, 20, 30, RegisterInput{Key: "a", Op: OpCAS, Expect: 1, Value: 2}, RegisterOutput{OK: true}),
		op(2, 20, 30, RegisterInput{Key: "a", Op: OpCAS, Expect: 1, Value: 3}, RegisterOutput{OK: true}),
	}
	if porcupine.CheckOperations(m, doubleWin) {
		t.Fatal("two compare-and-sets from the same value both won")
	}
}
