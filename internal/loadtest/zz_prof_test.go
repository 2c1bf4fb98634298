package loadtest
import ("testing";"context";"time";"os";"strings")
func TestZZProf(t *testing.T){
 a := os.Getenv("ZZ_ATTACK"); if a == "" { t.Skip() }
 r, err := Run(context.Background(), Options{N: 4, Duration: 15*time.Second, Query: "play=1", Mode: ModeAttack, Attack: a, AttackQuery: os.Getenv("ZZ_QUERY")})
 if err != nil { t.Fatal(err) }
 var b strings.Builder; r.WriteText(&b); os.WriteFile("/tmp/hd/zz.txt", []byte(b.String()), 0644)
}
