module example.com/gomax

go 1.19
