module example.com/gocmp

go 1.21

require github.com/google/go-cmp v0.7.0
