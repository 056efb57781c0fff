package password

import "testing"

func TestHashVerify(t *testing.T) {
	p := Params{Memory: 64, Time: 1, Threads: 1, KeyLen: 16}
	h, err := Hash("correct horse", p)
	if err != nil {
		t.Fatal(err)
	}
	h2, _ := Hash("correct horse", p)
	if h == h2 {
		t.Fatal("two hashes of one password must differ (salt)")
	}
	for _, tc := range []struct {
		plain string
		want  bool
	}{{"correct horse", true}, {"correct horsE", false}, {"", false}} {
		ok, err := Verify(tc.plain, h)
		if err != nil || ok != tc.want {
			t.Fatalf("Verify(%q) = %v, %v; want %v", tc.plain, ok, err, tc.want)
		}
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=1,t=1,p=1$AA$AA", "$argon2id$v=19$m=x$AA$AA", "$argon2id$v=19$m=64,t=1,p=1$!!$AA"} {
		if _, err := Verify("x", bad); err == nil {
			t.Fatalf("Verify accepted malformed hash %q", bad)
		}
	}
}
