module github.com/leasehold/leasehold/bench/clients/go

go 1.23

require github.com/leasehold/leasehold/clients/go v0.0.0

replace github.com/leasehold/leasehold/clients/go => ../../../clients/go
